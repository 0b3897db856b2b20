import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runCrashCycles } from "../../tools/crash/crash-cycles.js";
import { CLI, makeDataDir, NATIVE_MODE } from "../support/server.js";

describe("crash safety", () => {
  it("loses no acknowledged event and stores no partial bulk across 10 kill -9 cycles under load", { timeout: 180_000 }, async () => {
    const dataDir = makeDataDir();
    try {
      const report = await runCrashCycles({ cli: CLI, dataDir, cycles: 10, native: NATIVE_MODE });
      expect(report.cycles).toBe(10);
      // The load must have been real for the check to mean anything.
      expect(report.acknowledgedEvents).toBeGreaterThan(100);
      expect(report.acknowledgedBulks).toBeGreaterThan(5);
      expect(report.failures).toEqual([]);
      expect(report.lostEvents).toBe(0);
      expect(report.partialBulks).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
