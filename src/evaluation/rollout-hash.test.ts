import { hashInt } from "@bucketco/flag-evaluation";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { encodeLikeJsSha256, rolloutBucket, UNKNOWN_BUCKET } from "./rollout-bucket.js";
import { FieldBuckets, RolloutCaches } from "./rollout-hash.js";

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

/** Rows of one column, as a field with one rollout on it has. */
function oneColumn(generationSize: number): FieldBuckets {
  const rows = new FieldBuckets(generationSize);
  rows.addColumn();
  return rows;
}

describe("FieldBuckets", () => {
  it("answers the same row for a value until it is dropped, new rows holding no bucket", () => {
    const rows = new FieldBuckets(4);
    expect([rows.addColumn(), rows.addColumn(), rows.addColumn()]).toEqual([0, 1, 2]);
    const row = rows.row("company-1")!;
    expect(Array.from(row)).toEqual([UNKNOWN_BUCKET, UNKNOWN_BUCKET, UNKNOWN_BUCKET]);
    row[1] = 4_200;
    expect(rows.row("company-1")).toBe(row);
    expect(rows.row("company-2")).not.toBe(row);
  });

  it("drops its rows when a column is added (they have no room for it)", () => {
    const rows = oneColumn(4);
    rows.row("a");
    rows.addColumn();
    expect(rows.size).toBe(0);
    expect(rows.row("a")!.length).toBe(2);
  });

  it("holds at most two generations", () => {
    const rows = oneColumn(100);
    // 300 one-off values: fewer than the 400 lookups after which the gate would judge them and drop everything.
    for (let user = 0; user < 300; user++) rows.row(`user-${user}`);
    expect(rows.size).toBeLessThanOrEqual(200);
    expect(rows.size).toBeGreaterThan(100);
  });

  it("keeps a recently used row across a generation turnover", () => {
    const rows = oneColumn(2);
    rows.row("a");
    rows.row("b");
    rows.row("c"); // full: "a" and "b" become the previous generation
    rows.row("a"); // found there, and brought into the current one
    rows.row("d"); // full again: the generation holding "b" is dropped
    expect(rows.has("a")).toBe(true);
    expect(rows.has("b")).toBe(false);
    expect(rows.size).toBe(3);
  });
});

describe("FieldBuckets under values that do not come back", () => {
  it("stops keeping rows after a sample of mostly misses, and samples again after the bypass", () => {
    const rows = oneColumn(100_000);
    let next = 0;
    for (let index = 0; index < 4 * 1_024; index++) rows.row(`fresh-${next++}`);
    expect(rows.bypassing).toBe(true);
    expect(rows.size).toBe(0);
    for (let index = 0; index < 16 * 1_024; index++) expect(rows.row(`fresh-${next++}`)).toBeNull();
    expect(rows.bypassing).toBe(false);
    expect(rows.row(`fresh-${next++}`)).not.toBeNull();
  });

  it("keeps 1,000 users that come round in turn from a cold start (their first hits come after 1,000 lookups)", () => {
    const rows = oneColumn(100_000);
    for (let round = 0; round < 5; round++) for (let user = 0; user < 1_000; user++) rows.row(`u${user}`);
    expect(rows.bypassing).toBe(false);
    expect(rows.size).toBe(1_000);
  });

  it("decides within four generations: bypasses user ids it cannot hold, keeps 200 companies it can", () => {
    const users = oneColumn(RolloutCaches.MIN_ROWS);
    for (let user = 0; user < 4 * RolloutCaches.MIN_ROWS; user++) users.row(`u${user}`);
    expect(users.bypassing).toBe(true);

    const companies = oneColumn(RolloutCaches.MIN_ROWS);
    for (let index = 0; index < 4 * 4 * RolloutCaches.MIN_ROWS; index++) companies.row(`company-${index % 200}`);
    expect(companies.bypassing).toBe(false);
    expect(companies.has("company-7")).toBe(true);
  });
});

describe("RolloutCaches", () => {
  it("gives the rollouts on one field columns of the same rows, and a key read through two fields a slot on each", () => {
    const caches = new RolloutCaches();
    const a = caches.slotFor("a", 0);
    const b = caches.slotFor("b", 0);
    const c = caches.slotFor("c", 1);
    const aAgain = caches.slotFor("a", 0);
    const aOnOther = caches.slotFor("a", 1);
    const slots = caches.slots;
    expect(aAgain).toBe(a);
    expect(slots[a]!.rows).toBe(slots[b]!.rows);
    expect([slots[a]!.column, slots[b]!.column]).toEqual([0, 1]);
    expect(slots[c]!.rows).toBe(slots[aOnOther]!.rows);
    expect(slots[aOnOther]!.hasher).toBe(slots[a]!.hasher);
    expect(caches.fields).toHaveLength(2);
    expect(caches.keyCount).toBe(3);
  });

  it("splits the generation budget between rollout slots, within bounds", () => {
    const few = new RolloutCaches();
    few.slotFor("a", 0);
    few.slotFor("b", 1);
    few.sizeGenerations();
    expect(few.fields[0]!.generationSize).toBe(RolloutCaches.MAX_ROWS);

    const many = new RolloutCaches();
    for (let key = 0; key < 1_000; key++) many.slotFor(`feature-${key}`, key % 2);
    many.sizeGenerations();
    expect(many.fields[1]!.generationSize).toBe(RolloutCaches.MIN_ROWS);

    const some = new RolloutCaches();
    for (let key = 0; key < 64; key++) some.slotFor(`feature-${key}`, 0);
    some.sizeGenerations();
    expect(some.fields[0]!.generationSize).toBe(1_024);
  });
});
