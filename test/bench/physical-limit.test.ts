/** Issue 33's targets in the report: evaluation against the bare server sending the same answer bytes, idle, CPU. */
import { describe, expect, it } from "vitest";
import { physicalLimitTargets } from "../../bench/report/physical-limit.js";
import type { LoadFigure, ServerInfo } from "../../bench/support/lab.js";
import { figure } from "./load-figure.js";

const SERVICE: ServerInfo = { kind: "service", workers: 1, native: true };
const HELLO: ServerInfo = { kind: "hello-uws" };

function rows(load: LoadFigure[]) {
  return new Map(physicalLimitTargets(new Map(load.map((entry) => [entry.id, entry]))).map((row) => [row.id, row]));
}

describe("physicalLimitTargets", () => {
  it("sets each evaluate-N against the bare server sending its answer's bytes, with issue 33's thresholds", () => {
    const targets = rows([
      figure("evaluate-10", 80_000, SERVICE, { machineIdleShare: 0.08, serverCpuUsPerItem: 20 }),
      figure("hello-uws-get-10-features", 100_000, HELLO),
      figure("evaluate-50", 30_000, SERVICE, { machineIdleShare: 0.3, serverCpuUsPerItem: 45 }),
      figure("hello-uws-get-50-features", 100_000, HELLO),
      figure("evaluate-1000", 9_000, SERVICE, { latencyMs: { p50: 10, p90: 20, p99: 30 } }),
      figure("hello-uws-get-1000-features", 10_000, HELLO),
    ]);
    expect(targets.get("evaluate-10-same-bytes")).toMatchObject({ ratio: 0.8, baselineId: "hello-uws-get-10-features", verdict: "PASS" });
    expect(targets.get("evaluate-50-same-bytes")).toMatchObject({ ratio: 0.3, verdict: "MISS" });
    // 90 % of the limit, but a p99 of 30 ms against the 25 ms the target allows.
    expect(targets.get("evaluate-1000-same-bytes")).toMatchObject({ ratio: 0.9, verdict: "MISS" });
    expect(targets.get("evaluate-10-idle")).toMatchObject({ value: 8, verdict: "PASS" });
    expect(targets.get("evaluate-50-idle")).toMatchObject({ value: 30, verdict: "MISS" });
    expect(targets.get("cpu-per-request-50-unprofiled")).toMatchObject({ value: 45, verdict: "MISS" });
  });

  it("counts a figure with errors, or one not measured, as missed", () => {
    const targets = rows([figure("evaluate-10", 90_000, SERVICE, { errors: 3 }), figure("hello-uws-get-10-features", 100_000, HELLO)]);
    expect(targets.get("evaluate-10-same-bytes")?.verdict).toBe("MISS");
    expect(targets.get("evaluate-50-same-bytes")).toMatchObject({ verdict: "MISS" });
    expect(Number.isNaN(targets.get("evaluate-50-same-bytes")!.ratio)).toBe(true);
    expect(targets.get("cpu-per-request-50-unprofiled")?.verdict).toBe("MISS");
  });
});
