import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rolloutBucket } from "./rollout-hash.js";
import { RolloutHasher } from "./rollout-hasher.js";

describe("RolloutHasher", () => {
  it("gives the contract's vectors", () => {
    expect(new RolloutHasher("huddle.").bucket("acme")).toBe(30148);
    expect(new RolloutHasher("test-flag.").bucket("user-1")).toBe(179);
    expect(new RolloutHasher("").bucket("EEuoT8KShb")).toBe(38026);
  });

  it("equals rolloutBucket for any key and value, one block or more, ASCII or not", () => {
    const text = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: "binary", maxLength: 30 }), fc.string({ unit: "grapheme", maxLength: 10 }));
    fc.assert(
      fc.property(text, fc.array(text, { minLength: 1, maxLength: 8 }), (key, values) => {
        const hasher = new RolloutHasher(`${key}.`);
        for (const value of values) expect(hasher.bucket(value)).toBe(rolloutBucket(`${key}.${value}`));
      }),
      { numRuns: 2_000 },
    );
  });

  it("is right at every length around the one-block limit", () => {
    for (let prefixLength = 0; prefixLength <= 60; prefixLength++) {
      const hasher = new RolloutHasher("k".repeat(prefixLength));
      for (let valueLength = 0; valueLength + prefixLength <= 64; valueLength++) {
        const value = "v".repeat(valueLength);
        expect(hasher.bucket(value)).toBe(rolloutBucket("k".repeat(prefixLength) + value));
      }
    }
  });
});
