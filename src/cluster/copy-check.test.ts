import { describe, expect, it } from "vitest";
import { StreamCopyCheck, type Divergence } from "./copy-check.js";

const WINDOW_MS = 120_000;

function check() {
  const reported: Divergence[] = [];
  return { reported, copy: new StreamCopyCheck(WINDOW_MS, (divergence) => reported.push(divergence)) };
}

describe("the check of the stream copy a node reads", () => {
  it("admits a copy that keeps JetStream's promises and reports nothing", () => {
    const { reported, copy } = check();
    copy.acknowledged(2, "a.boot.1");
    expect([copy.admit(1, "b.boot.1", 1_000), copy.admit(2, "a.boot.1", 1_001), copy.admit(3, "c.boot.1", 1_002)]).toEqual([true, true, true]);
    expect(reported).toEqual([]);
    expect(copy.divergences).toBe(0);
  });

  it("refuses a message id applied before within the duplicate window, naming where it was first", () => {
    const { reported, copy } = check();
    expect(copy.admit(25, "a.boot.25", 1_000)).toBe(true);
    expect(copy.admit(198, "a.boot.25", 5_000)).toBe(false);
    expect(reported).toEqual([{ sequence: 198, found: "a.boot.25", kind: "duplicate", firstSequence: 25 }]);
    expect(copy.divergences).toBe(1);
    expect(copy.last).toEqual(reported[0]);
  });

  it("admits an id again once the duplicate window passed (JetStream would store a publish again then too)", () => {
    const { reported, copy } = check();
    expect(copy.admit(1, "a.boot.1", 1_000)).toBe(true);
    expect(copy.admit(2, "b.boot.1", 1_000 + WINDOW_MS + 1)).toBe(true);
    expect(copy.admit(3, "a.boot.1", 1_000 + WINDOW_MS + 2)).toBe(true);
    expect(reported).toEqual([]);
  });

  it("reports a sequence that holds another message than the one JetStream acknowledged to this node there", () => {
    const { reported, copy } = check();
    copy.acknowledged(168, "b.boot.114");
    expect(copy.admit(168, "a.boot.56", 1_000)).toBe(true);
    expect(reported).toEqual([{ sequence: 168, found: "a.boot.56", kind: "replaced", expected: "b.boot.114" }]);
  });

  it("admits messages without an id (nothing to compare) unless this node was acknowledged one there", () => {
    const { reported, copy } = check();
    expect(copy.admit(1, undefined, 1_000)).toBe(true);
    copy.acknowledged(2, "a.boot.2");
    expect(copy.admit(2, undefined, 1_001)).toBe(true);
    expect(reported.map((divergence) => divergence.kind)).toEqual(["replaced"]);
  });
});
