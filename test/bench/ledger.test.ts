/** The report's ledger: each thread's CPU per request beside the bare server's, the ratios, the ceiling and the goals. */
import { describe, expect, it } from "vitest";
import { buildLedger } from "../../bench/report/ledger.js";
import type { StageFigure } from "../../bench/serving/evaluation-stages.js";
import { STAGES } from "../../bench/support/cpu-stages.js";
import { ledgerBlocks } from "../../bench/report/ledger-markdown.js";
import type { LoadFigure, ServerInfo } from "../../bench/support/lab.js";
import { roleCpuPerItem, threadRole, type RoleCpu } from "../../bench/support/thread-cpu.js";
import { THREAD_NAMES } from "../../src/observability/thread-name.js";
import { figure } from "./load-figure.js";

const SERVICE: ServerInfo = { kind: "service", workers: 1, native: true };
const split = (frontEnd: number, workers: number[], projector = 0, other = 0): RoleCpu => ({
  frontEnd,
  workers,
  projector,
  other,
  total: frontEnd + workers.reduce((sum, value) => sum + value, 0) + projector + other,
});
const byId = (figures: LoadFigure[]) => new Map(figures.map((entry) => [entry.id, entry]));

describe("thread roles", () => {
  it("tells the front end, the job workers, the projector and the rest apart by the names the threads give themselves", () => {
    expect(threadRole({ name: "node (main)", main: true })).toBe("front end");
    expect(threadRole({ name: `${THREAD_NAMES.jobWorker}3`, main: false })).toBe("worker");
    expect(threadRole({ name: THREAD_NAMES.projector, main: false })).toBe("projector");
    expect(threadRole({ name: "node", main: false })).toBe("other");
  });

  it("turns each thread's milliseconds into µs per item, workers busiest first", () => {
    const rows = [
      { tid: "1", name: "node (main)", main: true, ms: 200 },
      { tid: "2", name: `${THREAD_NAMES.jobWorker}1`, main: false, ms: 50 },
      { tid: "3", name: `${THREAD_NAMES.jobWorker}2`, main: false, ms: 150 },
      { tid: "4", name: THREAD_NAMES.projector, main: false, ms: 30 },
      { tid: "5", name: "node", main: false, ms: 70 },
    ];
    expect(roleCpuPerItem(rows, 10_000)).toEqual({ frontEnd: 20, workers: [15, 5], projector: 3, other: 7, total: 50 });
  });
});

describe("buildLedger", () => {
  const ledger = buildLedger(
    byId([
      figure("hello-uws-get-10-features", 100_000, { kind: "hello-uws" }, { threadCpuUsPerItem: split(8, []) }),
      figure("hello-uws-get-50-features", 80_000, { kind: "hello-uws" }, { threadCpuUsPerItem: split(10, []) }),
      figure("evaluate-10", 30_000, SERVICE, { threadCpuUsPerItem: split(10, [8], 0, 2) }),
      figure("evaluate-50", 20_000, SERVICE, { threadCpuUsPerItem: split(20, [15], 0, 5) }),
      figure("enabled-50", 15_000, SERVICE, { threadCpuUsPerItem: split(30, [30], 0, 0) }),
      figure("group-commit-uws-post", 40_000, { kind: "group-commit" }, { threadCpuUsPerItem: split(20, [], 0, 10) }),
      figure("event", 30_000, SERVICE, { threadCpuUsPerItem: split(20, [15], 0, 5) }),
      figure("bulk-mixed-1000", 200_000, SERVICE, { unit: "events/s", itemsPerRequest: 1000, threadCpuUsPerItem: split(1, [2], 2, 1) }),
    ]),
  );
  const row = (id: string) => ledger.rows.find((entry) => entry.id === id)!;

  it("sets each scenario beside its bare same-bytes server, with the ratios and the front end's ceiling", () => {
    expect(ledger.rows.map((entry) => entry.id)).toEqual(["evaluate-10", "evaluate-50", "enabled-50", "event", "bulk-mixed-1000"]);
    expect(row("evaluate-10")).toMatchObject({ baselineId: "hello-uws-get-10-features", ratio: 20 / 8, frontEndRatio: 10 / 8, frontEndCeiling: 100_000, baselineFrontEndCeiling: 125_000 });
    expect(row("event").baselineId).toBe("group-commit-uws-post");
    // No bulk ceiling in this run: the row is there, its ratio is not.
    expect(row("bulk-mixed-1000").unit).toBe("item");
    expect(row("bulk-mixed-1000").ratio).toBeNaN();
  });

  it("judges each goal from the run: PASS, MISS, or not measured", () => {
    const goal = (start: string) => ledger.goals.find((entry) => entry.text.startsWith(start))!;
    expect(goal("CPU per request at 10 features")).toMatchObject({ value: 2.5, verdict: "PASS" });
    expect(goal("CPU per request at 50 features")).toMatchObject({ value: 4, verdict: "MISS" });
    expect(goal("front-end thread at 10 features")).toMatchObject({ value: 1.25, verdict: "PASS" });
    expect(goal("front-end thread at 50 features")).toMatchObject({ value: 2, verdict: "MISS" });
    expect(goal("enabled-50")).toMatchObject({ value: 1.5, verdict: "PASS" });
    expect(goal("POST /event")).toMatchObject({ value: 40 / 30, verdict: "PASS" });
    expect(goal("1,000-item mixed /bulk").verdict).toBe("—");
  });

  it("renders a table row per scenario and one per goal", () => {
    const markdown = ledgerBlocks(ledger).join("\n\n");
    expect(markdown).toContain("## CPU per request: the ledger");
    expect(markdown).toContain("| GET /features/evaluated, 10 features (evaluate-10) | 10.0 | 8.00 | 0.00 | 2.00 | 20.0 |");
    expect(markdown).toContain("100,000");
    expect(markdown).toMatch(/\| CPU per request at 50 features ≤ 3\.0× the bare same-bytes server \| 4\.00× \| ≤ 3× \| MISS \|/);
  });
});

describe("ledger floors", () => {
  // A profiled run's stages at 10 features: 40 µs in all, 20 of them in the stages every answer passes through.
  const stagesAt = (features: number, scaleTo: number): StageFigure => {
    const stages = Object.fromEntries(STAGES.map((stage) => [stage, 0])) as StageFigure["stages"];
    Object.assign(stages, { "thread hop": 6, "query parse": 2, "remote context": 4, "evaluation (rules)": 4, "rollout hashing": 2, serialisation: 2 });
    stages["HTTP transport and response write"] = scaleTo - 20;
    return { title: "profiled", features, workers: 1, requests: 1000, rps: 1000, totalUs: scaleTo, stages };
  };
  const figures = (service10: number) =>
    byId([
      figure("hello-uws-get-10-features", 100_000, { kind: "hello-uws" }, { threadCpuUsPerItem: split(8, []) }),
      figure("evaluate-10", 30_000, SERVICE, { threadCpuUsPerItem: split(service10 / 2, [service10 / 2]) }),
    ]);

  it("adds the bare server's cost to the stages every answer passes through, scaled to the unprofiled run", () => {
    // Unprofiled 30 µs against a profiled 40: every stage × 0.75, so the stages' 20 µs count 15; the floor 8 + 15 = 23.
    const [floor] = buildLedger(figures(30), [stagesAt(10, 40)]).floors;
    expect(floor).toMatchObject({ features: 10, transportUs: 8, scale: 0.75, floorUs: 23, allowedUs: 20, bounded: true });
    expect(floor!.stageUs["thread hop"]).toBe(4.5);
    const markdown = ledgerBlocks(buildLedger(figures(30), [stagesAt(10, 40)])).join("\n\n");
    expect(markdown).toContain("the bare server 8.00 µs + thread hop 4.50 + query parse 1.50");
    expect(markdown).toContain("**23.0 µs**, against the 20.0 µs the goal on the total allows — bounded");
  });

  it("says so when the floor leaves room under the goal, and gives none without the run's stages", () => {
    // Unprofiled 12 µs against a profiled 40: the stages count 6, the floor 14, under the 20 allowed.
    const [floor] = buildLedger(figures(12), [stagesAt(10, 40)]).floors;
    expect(floor).toMatchObject({ floorUs: 14, bounded: false });
    expect(ledgerBlocks(buildLedger(figures(12), [stagesAt(10, 40)])).join("\n")).toContain("not bounded by it: 6.00 µs would remain");
    expect(buildLedger(figures(12)).floors).toEqual([]);
  });
});
