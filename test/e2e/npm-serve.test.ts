import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, makeDataDir, NATIVE_MODE } from "../support/server.js";

// `npm start` is `npm run build && exec npm run serve`; this runs the serve half (the build has been done) the same way.
describe("under npm", () => {
  it("drains on SIGTERM sent to npm and exits 0", { timeout: 60_000 }, async () => {
    const dataDir = makeDataDir();
    try {
      const npm = spawn("npm", ["run", "serve", "--silent"], {
        cwd: resolve(import.meta.dirname, "../.."),
        env: { ...process.env, SWITCHYARD_PORT: "0", SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN, SWITCHYARD_NATIVE: NATIVE_MODE },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const lines: string[] = [];
      const exited = new Promise<number | null>((done) => npm.once("exit", (code) => done(code)));
      const port = await new Promise<number>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`no listening line: ${lines.join("\n")}`)), 30_000);
        createInterface({ input: npm.stdout! }).on("line", (line) => {
          lines.push(line);
          if (line.includes('"message":"listening"')) {
            clearTimeout(timer);
            done((JSON.parse(line) as { port: number }).port);
          }
        });
      });
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      npm.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(lines.some((line) => line.includes('"message":"stopped"'))).toBe(true);
      // The server process is gone too: nothing answers on its port.
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
