import { hashInt } from "@bucketco/flag-evaluation";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { encodeLikeJsSha256, RolloutBucketCache, rolloutBucket, RolloutCaches } from "./rollout-hash.js";

describe("rolloutBucket", () => {
  it("matches the golden vectors (the whole `<key>.<value>` string is the input)", () => {
    expect(rolloutBucket("EEuoT8KShb")).toBe(38026);
    expect(rolloutBucket("huddle.acme")).toBe(30148);
    expect(rolloutBucket("test-flag.user-1")).toBe(179);
  });

  it("equals the reference hashInt on random strings, including non-ASCII", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 80 }), (input) => {
        expect(rolloutBucket(input)).toBe(hashInt(input));
      }),
      { numRuns: 3000 },
    );
  });

  it("equals hashInt on strings with lone surrogates, which js-sha256 encodes its own way", () => {
    const codeUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 70 });
    fc.assert(
      fc.property(codeUnits, (units) => {
        const input = String.fromCharCode(...units);
        expect(rolloutBucket(input)).toBe(hashInt(input));
      }),
      { numRuns: 3000 },
    );
    for (const input of ["\uD800", "a\uDC00", "\uDBFF\uDFFF", "\uD800x", "x\uD83D"]) {
      expect(rolloutBucket(input)).toBe(hashInt(input));
    }
  });

  it("encodes well-formed strings as UTF-8", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 20 }), (input) => {
        expect(encodeLikeJsSha256(input).equals(Buffer.from(input, "utf8"))).toBe(true);
      }),
    );
  });
});

describe("RolloutBucketCache", () => {
  it("answers what rolloutBucket answers, hit or miss", () => {
    const cache = new RolloutBucketCache("flag.", 4);
    for (let round = 0; round < 3; round++) {
      for (let user = 0; user < 10; user++) {
        expect(cache.bucket(`user-${user}`)).toBe(rolloutBucket(`flag.user-${user}`));
      }
    }
  });

  it("holds at most two generations", () => {
    const cache = new RolloutBucketCache("flag.", 100);
    // 300 one-off values: fewer than the 400 lookups after which the gate would judge them and drop everything.
    for (let user = 0; user < 300; user++) cache.bucket(`user-${user}`);
    expect(cache.size).toBeLessThanOrEqual(200);
    expect(cache.size).toBeGreaterThan(100);
  });

  it("keeps a recently used entry across a generation turnover", () => {
    const cache = new RolloutBucketCache("flag.", 2);
    cache.bucket("a");
    cache.bucket("b");
    cache.bucket("c"); // full: "a" and "b" become the previous generation
    cache.bucket("a"); // found there, and brought into the current one
    cache.bucket("d"); // full again: the generation holding "b" is dropped
    expect(cache.has("a")).toBe(true);
    expect(cache.has("b")).toBe(false);
    expect(cache.size).toBe(3);
  });
});

describe("RolloutBucketCache under values that do not come back", () => {
  it("stops caching after a sample of mostly misses, answers the same, and samples again after the bypass", () => {
    const cache = new RolloutBucketCache("flag.", 100_000);
    let next = 0;
    for (let index = 0; index < 4 * 1_024; index++) cache.bucket(`fresh-${next++}`);
    expect(cache.bypassing).toBe(true);
    expect(cache.size).toBe(0);
    for (let index = 0; index < 16 * 1_024; index++) {
      const value = `fresh-${next++}`;
      expect(cache.bucket(value)).toBe(rolloutBucket(`flag.${value}`));
    }
    expect(cache.bypassing).toBe(false);
    expect(cache.size).toBe(0);
  });

  it("caches 1,000 users that come round in turn from a cold start (their first hits come after 1,000 lookups)", () => {
    const cache = new RolloutBucketCache("flag.", 100_000);
    for (let round = 0; round < 5; round++) for (let user = 0; user < 1_000; user++) cache.bucket(`u${user}`);
    expect(cache.bypassing).toBe(false);
    expect(cache.size).toBe(1_000);
  });

  it("keeps caching values that come back", () => {
    const cache = new RolloutBucketCache("flag.", 100_000);
    for (let index = 0; index < 4 * 1_024; index++) cache.bucket(`company-${index % 200}`);
    expect(cache.bypassing).toBe(false);
    expect(cache.has("company-7")).toBe(true);
  });
});

describe("RolloutBucketCache sized for many rollout keys", () => {
  it("decides within four generations: bypasses user ids it cannot hold, keeps 200 companies it can", () => {
    const users = new RolloutBucketCache("flag.", RolloutCaches.MIN_PER_KEY);
    for (let user = 0; user < 4 * RolloutCaches.MIN_PER_KEY; user++) users.bucket(`u${user}`);
    expect(users.bypassing).toBe(true);
    expect(users.bucket("u5")).toBe(rolloutBucket("flag.u5"));

    const companies = new RolloutBucketCache("flag.", RolloutCaches.MIN_PER_KEY);
    for (let index = 0; index < 4 * 4 * RolloutCaches.MIN_PER_KEY; index++) companies.bucket(`company-${index % 200}`);
    expect(companies.bypassing).toBe(false);
    expect(companies.has("company-7")).toBe(true);
  });
});

describe("RolloutBucketCache following another on the same field", () => {
  it("bypasses while its leader finds caching not worth it, and caches once the leader does", () => {
    const leader = new RolloutBucketCache("a.", RolloutCaches.MIN_PER_KEY);
    const follower = new RolloutBucketCache("b.", RolloutCaches.MIN_PER_KEY);
    follower.follow(leader);
    // Before the leader's first verdict, and after a failed one, the follower keeps nothing.
    for (let user = 0; user < 4 * RolloutCaches.MIN_PER_KEY; user++) {
      leader.bucket(`u${user}`);
      expect(follower.bucket(`u${user}`)).toBe(rolloutBucket(`b.u${user}`));
    }
    expect(leader.bypassing).toBe(true);
    expect(follower.bypassing).toBe(true);
    expect(follower.size).toBe(0);

    // Values that come back: the leader's next window passes, and the follower caches them too.
    const leaderWhenReusing = new RolloutBucketCache("c.", RolloutCaches.MIN_PER_KEY);
    const reusing = new RolloutBucketCache("d.", RolloutCaches.MIN_PER_KEY);
    reusing.follow(leaderWhenReusing);
    for (let index = 0; index < 4 * RolloutCaches.MIN_PER_KEY; index++) leaderWhenReusing.bucket(`company-${index % 100}`);
    expect(reusing.bypassing).toBe(false);
    for (let index = 0; index < 200; index++) reusing.bucket(`company-${index % 100}`);
    expect(reusing.has("company-7")).toBe(true);
  });

  it("samples for itself when its leader is rarely consulted (a rollout behind a condition)", () => {
    const leader = new RolloutBucketCache("a.", RolloutCaches.MIN_PER_KEY);
    const follower = new RolloutBucketCache("b.", RolloutCaches.MIN_PER_KEY);
    follower.follow(leader);
    for (let index = 0; index < 3 * 4 * RolloutCaches.MIN_PER_KEY; index++) follower.bucket(`company-${index % 100}`);
    expect(follower.bypassing).toBe(false);
    expect(follower.has("company-7")).toBe(true);
  });
});

describe("RolloutCaches", () => {
  it("lets the first rollout on each field judge for the others on that field", () => {
    const caches = new RolloutCaches();
    const onUserId = [caches.slotFor("a", 0), caches.slotFor("b", 0)];
    const onCompanyId = caches.slotFor("c", 1);
    caches.sizeGenerations();
    const [first, second] = onUserId.map((slot) => caches.slots[slot]!.cache);
    // Nothing judged yet: the leaders sample (consult their caches), the follower waits for its leader's verdict.
    expect(first!.bypassing).toBe(false);
    expect(caches.slots[onCompanyId]!.cache.bypassing).toBe(false);
    expect(second!.bypassing).toBe(true);
  });

  it("splits the generation budget between rollout keys, within bounds", () => {
    const few = new RolloutCaches();
    few.for("a");
    few.for("b");
    few.sizeGenerations();
    expect(few.for("a").generationSize).toBe(RolloutCaches.MAX_PER_KEY);

    const many = new RolloutCaches();
    for (let key = 0; key < 1_000; key++) many.for(`feature-${key}`);
    many.sizeGenerations();
    expect(many.for("feature-0").generationSize).toBe(RolloutCaches.MIN_PER_KEY);

    const some = new RolloutCaches();
    for (let key = 0; key < 64; key++) some.for(`feature-${key}`);
    some.sizeGenerations();
    expect(some.for("feature-0").generationSize).toBe(1_024);
  });
});
