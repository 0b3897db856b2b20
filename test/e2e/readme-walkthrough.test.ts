/**
 * The README's walk-through, run as written against a fresh service: its shell blocks are read from README.md, each
 * command runs in one bash session (curl, node and the `switchyard` alias, in a scratch directory whose `./data` is
 * the service's fresh data dir), and the answer lines it shows (`# ⇒ {…}`, the part of the JSON answer that
 * matters) are checked against what the command printed. So the page and the service cannot drift apart.
 *
 * What a reader does by hand is done for them, and nothing else is changed: the port is the test server's
 * (`localhost:3000` is replaced, and SWITCHYARD_PORT tells the CLI), the password prompt is answered from a file, and
 * `TOKEN=sya_…` gets the secret `tokens create` printed (kept in a file as it is printed).
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnListening, type Listening } from "../../bench/support/spawn-listening.js";
import { ACCOUNT_TEST_ENV } from "../support/accounts.js";
import { runWalkThrough, walkThroughSteps } from "../support/doc-walkthrough.js";
import { CLI, NATIVE_MODE } from "../support/server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const PASSWORD = "walk-through password 1";

describe("the README walk-through on a fresh data dir", () => {
  let dir: string;
  let server: Listening;
  const output: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-readme-"));
    symlinkSync(join(ROOT, "dist"), join(dir, "dist"));
    writeFileSync(join(dir, "password"), `${PASSWORD}\n`);
    // `npm start` in another terminal, from the same directory: ./data, and an admin token generated on first start.
    // (Cheaper password hashes than the default, as in every suite: the answers are the same.)
    const env: Record<string, string> = { ...ACCOUNT_TEST_ENV, SWITCHYARD_PORT: "0", SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_NATIVE: NATIVE_MODE, SWITCHYARD_WORKERS: "1", SWITCHYARD_DATA_DIR: join(dir, "data") };
    server = await spawnListening([CLI, "serve"], { env, timeoutMs: 20_000, onLine: (line) => output.push(line) });
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers every step as the README shows, the remote-context step included", { timeout: 120_000 }, () => {
    const steps = walkThroughSteps(readFileSync(join(ROOT, "README.md"), "utf8"), "Walk-through");
    expect(steps.some((step) => step.command.includes("context.company.id=initech"))).toBe(true);
    runWalkThrough(dir, server.port, steps, (command) => {
      // What the reader pastes: the secret the token command printed just before.
      if (/^TOKEN=sya_/.test(command)) return `TOKEN=$(node -p 'JSON.parse(require("fs").readFileSync("token.json", "utf8")).secret')`;
      if (/ tokens create /.test(command)) return `${command.replace(/\s+#.*$/, "")} > token.json; cat token.json`;
      return command;
    });
    expect(steps.filter((step) => step.shown.length > 0).length).toBeGreaterThanOrEqual(5);
  });
});
