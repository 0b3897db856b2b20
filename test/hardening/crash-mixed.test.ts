/**
 * A short run of tools/crash/mixed-cycles.ts (the 50-cycle figures come from `node dist/tools/crash/mixed.js`, see
 * docs/RELIABILITY.md): kill -9 under evaluation + tracking + feedback load loses nothing acknowledged, stores no
 * multi-item write in part, and leaves a projected state equal to a rebuild from the tracking log.
 */
import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { KINDS, runMixedCrashCycles } from "../../tools/crash/mixed-cycles.js";
import { CLI, makeDataDir, NATIVE_MODE } from "../support/server.js";

describe("crash safety under mixed load", () => {
  it("loses no acknowledged write of any kind across 5 kill -9 cycles", { timeout: 120_000 }, async () => {
    const dataDir = makeDataDir();
    try {
      const report = await runMixedCrashCycles({ cli: CLI, dataDir, cycles: 5, native: NATIVE_MODE });
      expect(report.cycles).toBe(5);
      expect(report.failures).toEqual([]);
      for (const kind of KINDS) {
        expect(report.kinds[kind].lost, kind).toBe(0);
        expect(report.kinds[kind].partial, kind).toBe(0);
      }
      // The load must have been real for the check to mean anything.
      expect(report.kinds.event.acknowledged).toBeGreaterThan(20);
      expect(report.kinds.feedback.acknowledged).toBeGreaterThan(5);
      expect(report.evaluations.answered).toBeGreaterThan(50);
      // A dead connection is the only acceptable failure: no status other than 200 was answered.
      expect(Object.keys(report.unexpectedStatuses)).toEqual([]);
      expect(report.projectionsEqualRebuild).toBe(true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
