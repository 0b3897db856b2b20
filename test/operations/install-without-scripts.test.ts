/**
 * The README's `npm ci && npm start` with dependency install scripts blocked, as npm 12 does by default for any
 * package `allowScripts` does not approve (`npm ci --ignore-scripts` is the nearest on npm 11: it blocks them all,
 * approved ones included). The repository's files are copied to a scratch directory, installed from npm's cache
 * (CI's `npm ci` filled it), and `npm start` must build and serve the native service (SWITCHYARD_NATIVE=1: LMDB and
 * uWebSockets.js or fail), whose /health answers. The install must print no warning, and `allowScripts` must cover
 * every dependency that has an install script, so neither npm 11's advisory nor npm 12's list of skipped scripts
 * appears.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const scratch = mkdtempSync(join(tmpdir(), "switchyard-install-"));
const npm = (args: string[]) => spawnSync("npm", args, { cwd: scratch, encoding: "utf8", timeout: 240_000, env: { ...process.env, npm_config_loglevel: "warn" } });

/** The working tree's files that git tracks or would (not ignored): what a clone of this commit holds. */
function copyRepository(): void {
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: ROOT, encoding: "utf8" }).split("\0");
  for (const file of files) {
    if (file === "" || !existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(scratch, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(scratch, file));
  }
}

describe("install with dependency scripts blocked", () => {
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("installs without a warning, leaves no install script unreviewed, and npm start serves the native service", { timeout: 600_000 }, async () => {
    copyRepository();
    const install = npm(["ci", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"]);
    expect(install.status, install.stderr).toBe(0);
    expect(`${install.stdout}\n${install.stderr}`).not.toMatch(/npm warn/i);
    // npm reads `allowScripts` from 11.16 on; an older npm runs every install script and has nothing to review.
    const [major, minor] = npm(["--version"]).stdout.trim().split(".").map(Number) as [number, number];
    if (major > 11 || (major === 11 && minor >= 16)) {
      const review = npm(["install-scripts", "ls", "--json"]);
      expect(review.status, review.stderr).toBe(0);
      expect(JSON.parse(review.stdout)).toEqual({ allowScripts: [] });
    }

    const dataDir = join(scratch, "data");
    const start = spawn("npm", ["start", "--silent"], {
      cwd: scratch,
      env: { ...process.env, SWITCHYARD_PORT: "0", SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_NATIVE: "1", SWITCHYARD_WORKERS: "1", SWITCHYARD_DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const errors: string[] = [];
    start.stderr!.on("data", (chunk: Buffer) => errors.push(chunk.toString()));
    const exited = new Promise<number | null>((done) => start.once("exit", (code) => done(code)));
    try {
      const lines: string[] = [];
      const port = await new Promise<number>((done, fail) => {
        void exited.then((code) => fail(new Error(`npm start exited with ${code}: ${errors.join("")}\n${lines.join("\n")}`)));
        createInterface({ input: start.stdout! }).on("line", (line) => {
          lines.push(line);
          if (line.includes('"message":"listening"')) done((JSON.parse(line) as { port: number }).port);
        });
      });
      const health = await fetch(`http://127.0.0.1:${port}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ success: true });
      expect(lines.join("\n")).toMatch(/"store":"lmdb \(native\)".*uWebSockets\.js/);
    } finally {
      if (start.exitCode === null) start.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });
});
