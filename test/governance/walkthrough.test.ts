/**
 * docs/GOVERNANCE.md's walk-through, run as written against a fresh service (policy → request → review → schedule →
 * apply → kill switch → rollback by reverting): every command in one bash session, every answer it shows checked.
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

describe(`docs/GOVERNANCE.md's walk-through on a fresh data dir (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let dir: string;
  let server: Listening;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-governance-"));
    symlinkSync(join(ROOT, "dist"), join(dir, "dist"));
    writeFileSync(join(dir, "password"), "walk-through password 1\n");
    // `npm start` in the same directory: ./data, and an admin token generated on first start into ./data/admin-token.
    const env: Record<string, string> = { ...ACCOUNT_TEST_ENV, SWITCHYARD_PORT: "0", SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_NATIVE: NATIVE_MODE, SWITCHYARD_WORKERS: "1", SWITCHYARD_DATA_DIR: join(dir, "data") };
    server = await spawnListening([CLI, "serve"], { env, timeoutMs: 20_000, onLine: () => {} });
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers every step as the page shows", { timeout: 120_000 }, () => {
    const steps = walkThroughSteps(readFileSync(join(ROOT, "docs/GOVERNANCE.md"), "utf8"), "Walk-through");
    expect(steps.filter((step) => step.shown.length > 0).length).toBeGreaterThanOrEqual(15);
    runWalkThrough(dir, server.port, steps);
  });
});
