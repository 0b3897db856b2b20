import { describe, expect, it } from "vitest";
import { OfrepRevalidation, ifNoneMatchHolds } from "./ofrep-revalidation.js";

describe("OfrepRevalidation", () => {
  it("holds an ETag while version, epoch and time allow, and no longer", () => {
    let now = 1_000;
    const memo = new OfrepRevalidation(10, 500, () => now);
    memo.remember("k", '"a"', 3, 7);
    expect(memo.current("k", 3, 7)).toBe('"a"');
    expect(memo.current("k", 4, 7)).toBeUndefined();
    expect(memo.current("k", 3, 8)).toBeUndefined();
    expect(memo.current("other", 3, 7)).toBeUndefined();
    now += 500;
    expect(memo.current("k", 3, 7)).toBeUndefined();
  });

  it("remembers nothing when the bound is zero", () => {
    const memo = new OfrepRevalidation(10, 0);
    memo.remember("k", '"a"', 1, 0);
    expect(memo.current("k", 1, 0)).toBeUndefined();
  });
});

describe("ifNoneMatchHolds", () => {
  it("reads lists, weak validators and *", () => {
    expect(ifNoneMatchHolds('"a"', '"a"')).toBe(true);
    expect(ifNoneMatchHolds('"b", W/"a"', '"a"')).toBe(true);
    expect(ifNoneMatchHolds("*", '"a"')).toBe(true);
    expect(ifNoneMatchHolds('"b"', '"a"')).toBe(false);
    expect(ifNoneMatchHolds(undefined, '"a"')).toBe(false);
  });
});
