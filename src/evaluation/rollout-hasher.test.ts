import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rolloutBucket } from "./rollout-bucket.js";
import { bucketOfFirstWord, RolloutHasher } from "./rollout-hasher.js";
import { compressLanes, LANES, lanes, prefixCount } from "./sha256x4.js";

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

  it("keeps every prefix's block when the table grows past its first page, and shares a prefix's block", () => {
    const hashers = Array.from({ length: 3_000 }, (_, index) => new RolloutHasher(`growth-key-${index}.`));
    for (const [index, hasher] of hashers.entries()) expect(hasher.bucket(`u${index}`)).toBe(rolloutBucket(`growth-key-${index}.u${index}`));
    const held = prefixCount();
    expect(new RolloutHasher("growth-key-0.").bucket("u0")).toBe(rolloutBucket("growth-key-0.u0"));
    expect(prefixCount()).toBe(held);
  });

  it("fills four lanes that hash like rolloutBucket, one value under keys of every alignment and values in turn", () => {
    const text = fc.oneof(fc.string({ maxLength: 50 }), fc.string({ unit: "binary", maxLength: 20 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 20 }), text), { minLength: 1, maxLength: 12 }), (pairs) => {
        // Runs of the same value under keys of different lengths, as a context's user id meets many rollouts.
        const inputs = pairs.flatMap(([key, value]) => [0, 1, 2, 3].map((extra) => [`${key}${"k".repeat(extra)}.`, value] as const));
        for (let start = 0; start < inputs.length; start += LANES) {
          const filled: { prefix: string; value: string; lane: number }[] = [];
          inputs.slice(start, start + LANES).forEach(([prefix, value], lane) => {
            if (new RolloutHasher(prefix).fillLane(value, lane)) filled.push({ prefix, value, lane });
            else expect(Buffer.byteLength(prefix + value) > 55 || /[^\x00-\x7f]/.test(value)).toBe(true);
          });
          compressLanes();
          for (const { prefix, value, lane } of filled) expect(bucketOfFirstWord(lanes.output[lane]!)).toBe(rolloutBucket(prefix + value));
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
