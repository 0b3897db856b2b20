import { describe, expect, it } from "vitest";
import { BatchGate } from "./batch-gate.js";

/** A gate limited to one batch per thread. */
function gate(slots: number, maxBatch: number) {
  const sent: number[][] = [];
  const batches = new BatchGate<number>(slots, maxBatch, (batch) => sent.push(batch));
  batches.limit(1);
  return { batches, sent };
}

describe("BatchGate", () => {
  it("sends one batch per slot and holds what arrives until that batch is back, then sends it together", () => {
    const { batches, sent } = gate(1, 32);
    [1, 2, 3].forEach((item) => batches.add(item));
    batches.release();
    expect(sent).toEqual([[1, 2, 3]]);
    // Arrivals in later turns while the worker has its batch: held, in order.
    batches.add(4);
    batches.release();
    batches.add(5);
    batches.release();
    expect(sent).toEqual([[1, 2, 3]]);
    expect(batches.queued).toBe(2);
    batches.returned();
    expect(sent).toEqual([[1, 2, 3], [4, 5]]);
    batches.returned();
    expect(sent).toHaveLength(2);
    expect(batches.queued).toBe(0);
    // An idle gate sends at once.
    batches.add(6);
    batches.release();
    expect(sent.at(-1)).toEqual([6]);
  });

  it("spreads what waits over the free slots, no batch longer than maxBatch, and keeps the rest for the next free slot", () => {
    const { batches, sent } = gate(2, 4);
    for (let item = 1; item <= 10; item++) batches.add(item);
    batches.release();
    expect(sent).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
    ]);
    expect(batches.queued).toBe(2);
    batches.returned();
    expect(sent.at(-1)).toEqual([9, 10]);
    // Two free slots share what waits.
    batches.returned();
    batches.returned();
    for (let item = 11; item <= 16; item++) batches.add(item);
    batches.release();
    expect(sent.slice(-2)).toEqual([
      [11, 12, 13],
      [14, 15, 16],
    ]);
  });

  it("does nothing when released with nothing waiting", () => {
    const { batches, sent } = gate(1, 8);
    batches.release();
    batches.add(1);
    batches.release();
    batches.returned();
    batches.release();
    expect(sent).toEqual([[1]]);
  });
});

describe("BatchGate without a limit", () => {
  it("sends what arrived together at once, spread over the threads, whatever is out", () => {
    const sent: number[][] = [];
    const batches = new BatchGate<number>(2, 4, (batch) => sent.push(batch));
    batches.limit(undefined);
    for (let item = 1; item <= 10; item++) batches.add(item);
    batches.release();
    expect(sent).toEqual([
      [1, 2, 3, 4],
      [5, 6, 7, 8],
      [9, 10],
    ]);
    batches.add(11);
    batches.release();
    expect(sent.at(-1)).toEqual([11]);
    expect(batches.queued).toBe(0);
  });

  it("takes a new limit at the next release, holding what arrives while the limit's slots are out", () => {
    const sent: number[][] = [];
    const batches = new BatchGate<number>(1, 32, (batch) => sent.push(batch));
    batches.add(1);
    batches.release();
    batches.limit(1);
    batches.add(2);
    batches.release();
    expect(sent).toEqual([[1]]);
    batches.returned();
    expect(sent).toEqual([[1], [2]]);
  });
});
