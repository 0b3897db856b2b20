import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareKeys } from "../../src/storage/kv.js";
import { SortedKeyIndex } from "./sorted-key-index.js";

function expected(model: Set<string>, start: string | undefined, end: string | undefined, reverse: boolean, limit: number): string[] {
  const keys = [...model]
    .filter((k) => (start === undefined || compareKeys(k, start) >= 0) && (end === undefined || compareKeys(k, end) < 0))
    .sort(compareKeys);
  if (reverse) keys.reverse();
  return keys.slice(0, limit);
}

describe("SortedKeyIndex", () => {
  it("matches a sorted model through inserts, deletes and ranges, across chunk splits", () => {
    const keyArbitrary = fc.string({ unit: fc.constantFrom("a", "b", "c", "é", "😀", "\uffff"), maxLength: 6 });
    const operation = fc.oneof(
      fc.record({ kind: fc.constant("insert" as const), key: keyArbitrary }),
      fc.record({ kind: fc.constant("append" as const), count: fc.integer({ min: 1, max: 3000 }) }),
      fc.record({ kind: fc.constant("delete" as const), key: keyArbitrary }),
      fc.record({
        kind: fc.constant("range" as const),
        start: fc.option(keyArbitrary, { nil: undefined }),
        end: fc.option(keyArbitrary, { nil: undefined }),
        reverse: fc.boolean(),
        limit: fc.oneof(fc.nat({ max: 10 }), fc.constant(Number.POSITIVE_INFINITY)),
      }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (operations) => {
        const index = new SortedKeyIndex();
        const model = new Set<string>();
        let appended = 0;
        for (const op of operations) {
          if (op.kind === "insert" && !model.has(op.key)) {
            model.add(op.key);
            index.insert(op.key);
          } else if (op.kind === "append") {
            // Keys above every generated one: the append fast path, filling and starting chunks.
            for (let i = 0; i < op.count; i++) {
              const k = `\u{10ffff}${(appended++).toString().padStart(6, "0")}`;
              model.add(k);
              index.insert(k);
            }
          } else if (op.kind === "delete" && model.has(op.key)) {
            model.delete(op.key);
            index.delete(op.key);
          } else if (op.kind === "range") {
            expect([...index.keys(op.start, op.end, op.reverse, op.limit)]).toEqual(expected(model, op.start, op.end, op.reverse, op.limit));
          }
        }
        expect(index.size).toBe(model.size);
        expect(index.toArray()).toEqual([...model].sort(compareKeys));
      }),
      { numRuns: 200 },
    );
  });

  it("keeps a walk going when keys change under it", () => {
    const index = SortedKeyIndex.fromSorted(Array.from({ length: 5000 }, (_, i) => `k${i.toString().padStart(5, "0")}`));
    const seen: string[] = [];
    for (const key of index.keys(undefined, undefined, false, Number.POSITIVE_INFINITY)) {
      seen.push(key);
      // Delete the key just handed out and insert one far behind: the walk must neither skip nor repeat.
      index.delete(key);
      if (seen.length === 10) for (let i = 0; i < 3000; i++) index.insert(`a${i}`);
    }
    expect(seen).toHaveLength(5000);
    expect(new Set(seen).size).toBe(5000);
    expect(index.size).toBe(3000);
  });

  it("keeps a reverse walk going when keys change under it", () => {
    const index = SortedKeyIndex.fromSorted(Array.from({ length: 3000 }, (_, i) => `k${i.toString().padStart(5, "0")}`));
    const seen: string[] = [];
    for (const key of index.keys("k00100", undefined, true, Number.POSITIVE_INFINITY)) {
      seen.push(key);
      index.insert(`${key}-later`);
    }
    expect(seen).toEqual(Array.from({ length: 2900 }, (_, i) => `k${(2999 - i).toString().padStart(5, "0")}`));
  });
});
