/**
 * The webhook deliveries-under-load bench's harness (no timings judged): what it calls a held backlog and a failure,
 * and a short run against the real service, whose receiver must get signed deliveries for the changes committed.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { backlogHeld, summarize, type PhaseRun } from "../../bench/serving/webhooks-report.js";

function run(phase: PhaseRun["phase"], round: number, overrides: Partial<PhaseRun> = {}): PhaseRun {
  const streams = phase === "C" ? {} : { evaluation: { rps: 1000, p50: 1, p99: 4, max: 9, errors: 0 }, event: { rps: 100, p50: 1, p99: 5, max: 9, errors: 0 } };
  return {
    phase,
    round,
    elapsedSeconds: 10,
    streams,
    changesCommitted: phase === "A" ? 0 : 500,
    changesFailed: 0,
    delivered: phase === "A" ? 0 : 499,
    deliveriesPerSecond: phase === "A" ? 0 : 49.9,
    backlogAtStart: 0,
    backlogAtEnd: phase === "A" ? 0 : 1,
    backlogSamples: phase === "A" ? [0, 0, 0, 0] : [1, 0, 1, 1, 0, 1, 1, 0],
    drainSeconds: 0.05,
    cpuMs: 1000,
    loadRequests: phase === "C" ? 0 : 11_000,
    cpuUsPerLoadRequest: phase === "C" ? Number.NaN : 90,
    cpuUsPerChange: phase === "A" ? Number.NaN : 200,
    ...overrides,
  };
}

const SETTING = { offered: { evaluation: 1000, event: 100 }, maxima: {}, busyChanges: "50/s", aloneChanges: "50/s", webhooks: 1, seconds: 10, signatures: { verified: 3, bad: [], duplicates: 0 } };

describe("webhooks under load: the summary", () => {
  it("calls a backlog held when it hovers, and not when it climbs through the phase", () => {
    expect(backlogHeld(run("B", 0), 1)).toBe(true);
    expect(backlogHeld(run("B", 0, { backlogSamples: [2, 10, 20, 30, 40, 50, 60, 70], backlogAtEnd: 70 }), 1)).toBe(false);
  });

  it("reports B against A with the rounds' range, and names every failure", () => {
    const runs = [0, 1].flatMap((round) => [run("A", round), run("B", round, { cpuUsPerLoadRequest: 180 }), run("C", round)]);
    const calm = summarize(runs, SETTING);
    expect(calm.failures).toEqual([]);
    const effects = (calm.json as { effects: { figure: string; ratio: number; withinNoise: boolean }[] }).effects;
    expect(effects.find((effect) => effect.figure === "evaluation req/s")).toMatchObject({ ratio: 1, withinNoise: true });
    expect(effects.find((effect) => effect.figure === "CPU µs per load request")).toMatchObject({ ratio: 2, withinNoise: false });
    expect(calm.text).toContain("deliveries/s in B (under load): median 49.9");

    const broken = summarize([run("A", 0), run("B", 0, { changesFailed: 2, firstChangeFailure: "500: boom" }), run("C", 0, { drainSeconds: Number.NaN })], { ...SETTING, signatures: { verified: 1, bad: ["whd_1: No matching signature found"], duplicates: 0 } });
    expect(broken.failures).toEqual([
      "round 1 B: 2 changes failed (500: boom)",
      "round 1 C: the deliveries had not drained 120 s after the phase",
      "signature: whd_1: No matching signature found",
    ]);
  });
});

describe("webhooks under load: a short run against the real service", () => {
  const scratch = mkdtempSync(join(tmpdir(), "switchyard-webhooks-bench-test-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("delivers every committed change, signed, and reports each phase", { timeout: 120_000 }, () => {
    const out = join(scratch, "report.json");
    const script = resolve(import.meta.dirname, "../../dist/bench/serving/webhooks-under-load.js");
    const result = spawnSync(process.execPath, [script, "--seconds", "1", "--repeats", "1", "--rates", "20,5,1", "--change-rate", "20", "--out", out], { encoding: "utf8", timeout: 110_000 });
    expect(result.status, result.stderr).toBe(0);
    const report = JSON.parse(readFileSync(out, "utf8")) as { runs: PhaseRun[]; failures: string[]; setting: { signatures: { verified: number; bad: string[] } } };
    expect(report.failures).toEqual([]);
    expect(report.runs.map((each) => each.phase)).toEqual(["A", "B", "C"]);
    const [a, b, c] = report.runs;
    expect(a!.changesCommitted).toBe(0);
    expect(a!.delivered).toBe(0);
    for (const phase of [b!, c!]) {
      expect(phase.changesCommitted).toBeGreaterThan(0);
      expect(phase.delivered).toBeGreaterThan(0);
      // What was still queued at the phase's end arrived before the next phase (the drain waits on the receiver).
      expect(Number.isFinite(phase.drainSeconds)).toBe(true);
    }
    expect(c!.backlogAtStart).toBe(0);
    expect(b!.streams.evaluation!.rps).toBeGreaterThan(0);
    expect(report.setting.signatures.verified).toBeGreaterThan(0);
    expect(report.setting.signatures.bad).toEqual([]);
  });
});
