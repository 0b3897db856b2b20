/**
 * Every bench entry point answers --help with its usage (starting with how to call it) and exits 0, without starting
 * a server or a load: the issue found `probe.js` crashing without arguments.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ENTRY_POINTS = [
  "run",
  "probe",
  "baselines/hello-server",
  "baselines/group-commit-server",
  "evaluation/compile-vs-reference",
  "evaluation/write-answer",
  "workers/shared-port",
  "workers/hop",
  "analytics/summary-vs-scan",
  "serving/webhooks-under-load",
];

describe("bench entry points", () => {
  it.each(ENTRY_POINTS)("%s answers --help with its usage", (entry) => {
    const script = resolve(import.meta.dirname, `../../dist/bench/${entry}.js`);
    const result = spawnSync(process.execPath, [script, "--help"], { encoding: "utf8", timeout: 30_000 });
    expect(result.status).toBe(0);
    expect(result.stdout.startsWith(`node dist/bench/${entry}.js`)).toBe(true);
  });
});
