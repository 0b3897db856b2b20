/** Bulk figures count items once projected: the arithmetic of one run and of a figure's runs (no server). */
import { describe, expect, it } from "vitest";
import { isCaughtUp, percentile, projectedItemsPerSecond, projectedRun, projectionFigure, projectionSummary } from "../../bench/support/projection.js";
import { median } from "../../bench/support/stats.js";

describe("items projected per second", () => {
  it("divides the items acknowledged during the load by the load and the catch-up after it", () => {
    // 40 bodies of 1,000 acknowledged in 4 s, projected 1 s after the load: 8,000/s, not the 10,000/s answered.
    expect(projectedItemsPerSecond({ acknowledgedItems: 40_000, loadSeconds: 4, catchUpSeconds: 1 })).toBe(8_000);
    expect(projectedItemsPerSecond({ acknowledgedItems: 40_000, loadSeconds: 4, catchUpSeconds: 0 })).toBe(10_000);
    expect(projectedItemsPerSecond({ acknowledgedItems: 0, loadSeconds: 0, catchUpSeconds: 0 })).toBeNaN();
  });

  it("is caught up only with no backlog and no lag", () => {
    expect(isCaughtUp({ lagMs: 0, backlog: 0 })).toBe(true);
    expect(isCaughtUp({ lagMs: 0, backlog: 3 })).toBe(false);
    expect(isCaughtUp({ lagMs: 12, backlog: 0 })).toBe(false);
  });

  it("takes nearest-rank percentiles of the lag samples", () => {
    const samples = Array.from({ length: 100 }, (_, index) => index + 1);
    expect(percentile(samples, 0.99)).toBe(99);
    expect(percentile(samples, 0.5)).toBe(50);
    expect(percentile([7], 0.99)).toBe(7);
    expect(percentile([], 0.99)).toBeNaN();
  });

  it("keeps one run's acknowledged rate, catch-up, lag and refusals beside its projected rate", () => {
    const run = projectedRun({ acknowledgedItems: 30_000, refused: 2, loadSeconds: 3, catchUpSeconds: 0.75, lagMs: [0, 120, 480, 60], backlogMax: 14 });
    expect(run).toMatchObject({ acknowledgedItems: 30_000, refused: 2, itemsPerSecond: 8_000, acknowledgedPerSecond: 10_000, lagSamples: 4, lagP99Ms: 480, lagMaxMs: 480, backlogMax: 14 });
  });

  it("sums refusals and takes medians over the runs, the worst lag and backlog of any", () => {
    const runs = [
      projectedRun({ acknowledgedItems: 20_000, refused: 0, loadSeconds: 2, catchUpSeconds: 0.5, lagMs: [100, 200], backlogMax: 5 }),
      projectedRun({ acknowledgedItems: 18_000, refused: 1, loadSeconds: 2, catchUpSeconds: 0, lagMs: [50, 900], backlogMax: 9 }),
      projectedRun({ acknowledgedItems: 21_000, refused: 3, loadSeconds: 2, catchUpSeconds: 1, lagMs: [300], backlogMax: 2 }),
    ];
    const figure = projectionFigure(runs, median);
    expect(figure.itemsPerSecond).toBe(8_000); // the median of 8,000, 9,000 and 7,000
    expect(figure.catchUpSeconds).toBe(0.5);
    expect(figure.lagP99Ms).toBe(300); // the median of the runs' p99s: 200, 900 and 300
    expect(figure.lagMaxMs).toBe(900);
    expect(figure.backlogMax).toBe(9);
    expect(figure.refused).toBe(4);
    expect(figure.runs).toHaveLength(3);
    expect(projectionSummary(figure)).toBe("projection lag p99 300 ms during the load, caught up 0.50 s after it, 4 requests refused");
  });
});
