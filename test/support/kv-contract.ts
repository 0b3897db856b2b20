import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compareKeys, key, prefixRange, type KvStore, type RangeOptions } from "../../src/storage/kv.js";

/**
 * The behaviour every KvStore must show, run against the LMDB store and the native-free log store alike
 * (`lmdb-store.test.ts`, `native-free/storage/log-store.test.ts`). `open` is called with a fresh temp dir per
 * test, and again with the same dir to check what survives a close.
 */
export function describeKvStoreContract(name: string, open: (dir: string) => Promise<KvStore> | KvStore): void {
  describe(`KvStore contract: ${name}`, () => {
    let dir: string;
    let store: KvStore;

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), "switchyard-kv-"));
      store = await open(dir);
    });

    afterEach(async () => {
      await store.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    });

    async function reopen(): Promise<void> {
      await store.close();
      store = await open(dir);
    }

    async function putAll(table: "users" | "events", entries: Record<string, unknown> | string[]): Promise<void> {
      const t = store.table(table);
      await store.write(() => {
        if (Array.isArray(entries)) for (const k of entries) t.put(k, k);
        else for (const [k, v] of Object.entries(entries)) t.put(k, v);
      });
    }

    function keysOf(options: RangeOptions, table: "users" | "events" = "users"): string[] {
      return [...store.table(table).range(options)].map((entry) => entry.key);
    }

    describe("point reads and writes", () => {
      it("reads back what a write put, and undefined for a missing key", async () => {
        const users = store.table<{ name: string }>("users");
        await store.write(() => users.put("u1", { name: "Ada" }));
        expect(users.get("u1")).toEqual({ name: "Ada" });
        expect(users.get("u2")).toBeUndefined();
      });

      it("resolves with what apply returned", async () => {
        await expect(store.write(() => 42)).resolves.toBe(42);
        await expect(store.write(() => ({ ok: true }))).resolves.toEqual({ ok: true });
      });

      it("makes a write visible to reads outside write() only once it has committed", async () => {
        const users = store.table("users");
        const pending = store.write(() => users.put("u1", 1));
        expect(users.get("u1")).toBeUndefined();
        await pending;
        expect(users.get("u1")).toBe(1);
      });

      it("overwrites and removes", async () => {
        const users = store.table("users");
        await store.write(() => users.put("u1", 1));
        await store.write(() => users.put("u1", 2));
        expect(users.get("u1")).toBe(2);
        await store.write(() => users.remove("u1"));
        expect(users.get("u1")).toBeUndefined();
        expect(keysOf({})).toEqual([]);
        // Removing a key that is not there is not an error.
        await store.write(() => users.remove("never-there"));
      });

      it("keeps tables apart", async () => {
        await store.write(() => {
          store.table("users").put("same", "user");
          store.table("companies").put("same", "company");
        });
        expect(store.table("users").get("same")).toBe("user");
        expect(store.table("companies").get("same")).toBe("company");
        expect(store.table("events").get("same")).toBeUndefined();
      });

      it("accepts keys up to LMDB's 1978 bytes and rejects a longer one", async () => {
        const users = store.table("users");
        const longest = `${"k".repeat(1975)}éx`; // 1975 + 2 + 1 bytes
        expect(Buffer.byteLength(longest)).toBe(1978);
        await store.write(() => users.put(longest, 1));
        expect(users.get(longest)).toBe(1);
        await expect(store.write(() => users.put(`${longest}x`, 1))).rejects.toThrow();
        expect(users.get(`${longest}x`)).toBeUndefined();
      });
    });

    describe("ranges", () => {
      const keys = ["a", "b", "b\u0000", "b\u0000z", "b\u0001", "c", "d", "10", "9", "é", "\ue000", "\uffff", "😀", "a\u0000x"];
      const sorted = [...keys].sort(compareKeys);

      beforeEach(async () => {
        await putAll("users", keys);
      });

      it("walks every key in UTF-8 byte order", () => {
        expect(keysOf({})).toEqual(sorted);
        // U+E000 and U+FFFF sort below an astral character in UTF-8, unlike in JavaScript's UTF-16 order.
        expect(keysOf({ start: "\ue000" })).toEqual(["\ue000", "\uffff", "😀"]);
      });

      it("returns entries with their values", () => {
        expect([...store.table("users").range({ start: "c", limit: 2 })]).toEqual([
          { key: "c", value: "c" },
          { key: "d", value: "d" },
        ]);
      });

      it("treats start as inclusive and end as exclusive", () => {
        expect(keysOf({ start: "b", end: "d" })).toEqual(["b", "b\u0000", "b\u0000z", "b\u0001", "c"]);
        expect(keysOf({ start: "b\u0000" })).toEqual(sorted.slice(sorted.indexOf("b\u0000")));
        expect(keysOf({ end: "a\u0000x" })).toEqual(["10", "9", "a"]);
        expect(keysOf({ start: "bb", end: "c" })).toEqual([]);
      });

      it("keeps the same bounds in reverse and walks them downwards", () => {
        expect(keysOf({ start: "b", end: "d", reverse: true })).toEqual(["c", "b\u0001", "b\u0000z", "b\u0000", "b"]);
        expect(keysOf({ reverse: true })).toEqual([...sorted].reverse());
        expect(keysOf({ start: "é", reverse: true })).toEqual(["😀", "\uffff", "\ue000", "é"]);
        expect(keysOf({ end: "a\u0000x", reverse: true })).toEqual(["a", "9", "10"]);
      });

      it("applies limit in either direction", () => {
        expect(keysOf({ limit: 3 })).toEqual(sorted.slice(0, 3));
        expect(keysOf({ reverse: true, limit: 2 })).toEqual(["😀", "\uffff"]);
        expect(keysOf({ start: "b", end: "d", reverse: true, limit: 1 })).toEqual(["c"]);
        expect(keysOf({ limit: 0 })).toEqual([]);
        expect(keysOf({ limit: 1000 })).toEqual(sorted);
      });

      it("returns nothing when start is not below end", () => {
        expect(keysOf({ start: "d", end: "b" })).toEqual([]);
        expect(keysOf({ start: "c", end: "c" })).toEqual([]);
        expect(keysOf({ start: "d", end: "b", reverse: true })).toEqual([]);
      });

      it("finds exactly the keys under a composite prefix with prefixRange", async () => {
        await putAll("events", [
          key("env1", "user", "a"),
          key("env1", "user", "b"),
          key("env1", "users", "x"),
          key("env1", "user"),
          key("env10", "user", "a"),
          key("env1", "user", "a", "nested"),
        ]);
        expect(keysOf(prefixRange("env1", "user"), "events")).toEqual([
          key("env1", "user", "a"),
          key("env1", "user", "a", "nested"),
          key("env1", "user", "b"),
        ]);
        expect(keysOf({ ...prefixRange("env1", "user"), reverse: true, limit: 2 }, "events")).toEqual([
          key("env1", "user", "b"),
          key("env1", "user", "a", "nested"),
        ]);
      });

      it("agrees with a sorted model for any keys and bounds", async () => {
        // Writes are the slow part, so each generated key set is written once and queried many times.
        // A small alphabet gives many shared prefixes; it holds the characters where UTF-8 and UTF-16 orders differ.
        const unit = fc.constantFrom("a", "b", "z", "\u0000", "\u0001", "é", "\ue000", "\uffff", "😀", "𝄞");
        const keyArbitrary = fc.string({ unit, minLength: 1, maxLength: 5 });
        const boundArbitrary = fc.option(fc.string({ unit, maxLength: 5 }), { nil: undefined });
        const queryArbitrary = fc.record({
          start: boundArbitrary,
          end: boundArbitrary,
          reverse: fc.boolean(),
          limit: fc.option(fc.nat({ max: 8 }), { nil: undefined }),
        });
        let round = 0;
        await fc.assert(
          fc.asyncProperty(fc.uniqueArray(keyArbitrary, { maxLength: 40 }), fc.array(queryArbitrary, { minLength: 20, maxLength: 20 }), async (generated, queries) => {
            const table = store.table("aggregates");
            const prefix = `r${round}:`;
            const afterPrefix = `r${round};`;
            round++;
            await store.write(() => {
              for (const k of generated) table.put(prefix + k, k);
            });
            const model = generated.map((k) => prefix + k).sort(compareKeys);
            for (const query of queries) {
              const options: RangeOptions = {
                start: query.start === undefined ? prefix : prefix + query.start,
                end: query.end === undefined ? afterPrefix : prefix + query.end,
                reverse: query.reverse,
                ...(query.limit === undefined ? {} : { limit: query.limit }),
              };
              let expected = model.filter((k) => compareKeys(k, options.start!) >= 0 && compareKeys(k, options.end!) < 0);
              if (query.reverse) expected.reverse();
              if (query.limit !== undefined) expected = expected.slice(0, query.limit);
              expect([...table.range(options)].map((entry) => entry.key)).toEqual(expected);
            }
          }),
          { numRuns: 25 },
        );
      });
    });

    describe("transactions", () => {
      it("lets apply read its own writes, in point reads and ranges", async () => {
        const users = store.table("users");
        await store.write(() => {
          users.put("a", 1);
          users.put("c", 3);
        });
        const seen = await store.write(() => {
          users.put("b", 2);
          users.remove("c");
          users.put("a", 10);
          return {
            b: users.get("b"),
            c: users.get("c"),
            range: [...users.range({})],
            reverse: [...users.range({ reverse: true, limit: 2 })].map((entry) => entry.key),
          };
        });
        expect(seen).toEqual({
          b: 2,
          c: undefined,
          range: [
            { key: "a", value: 10 },
            { key: "b", value: 2 },
          ],
          reverse: ["b", "a"],
        });
      });

      it("shows a transaction the writes of those queued before it in the same turn", async () => {
        const counters = store.table<number>("counters");
        const increments = Array.from({ length: 20 }, () =>
          store.write(() => {
            const next = (counters.get("n") ?? 0) + 1;
            counters.put("n", next);
            return next;
          }),
        );
        expect(await Promise.all(increments)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        expect(counters.get("n")).toBe(20);
      });

      it("rolls back a throwing apply alone, leaving the other writes of its turn in place", async () => {
        const users = store.table("users");
        await store.write(() => users.put("kept", "before"));
        const failure = new Error("validation failed");
        const first = store.write(() => users.put("x", 1));
        const throwing = store.write(() => {
          users.put("x", 2);
          users.put("ghost", true);
          users.remove("kept");
          throw failure;
        });
        const after = store.write(() => ({ x: users.get("x"), ghost: users.get("ghost"), kept: users.get("kept") }));
        await expect(throwing).rejects.toBe(failure);
        await first;
        expect(await after).toEqual({ x: 1, ghost: undefined, kept: "before" });
        expect(users.get("x")).toBe(1);
        expect(users.get("ghost")).toBeUndefined();
        expect(users.get("kept")).toBe("before");
        await reopen();
        expect(store.table("users").get("x")).toBe(1);
        expect(store.table("users").get("ghost")).toBeUndefined();
        expect(store.table("users").get("kept")).toBe("before");
      });

      it("commits every one of many concurrent writes", async () => {
        const events = store.table<number>("events");
        const writes: Promise<number>[] = [];
        for (let i = 0; i < 500; i++) writes.push(store.write(() => (events.put(key("e", i.toString().padStart(4, "0")), i), i)));
        // A second wave, issued from other turns while the first commits.
        for (let i = 500; i < 600; i++) {
          await new Promise((resolve) => setImmediate(resolve));
          writes.push(store.write(() => (events.put(key("e", i.toString().padStart(4, "0")), i), i)));
        }
        expect(await Promise.all(writes)).toEqual(Array.from({ length: 600 }, (_, i) => i));
        const stored = [...events.range(prefixRange("e"))].map((entry) => entry.value);
        expect(stored).toEqual(Array.from({ length: 600 }, (_, i) => i));
        await reopen();
        expect([...store.table("events").range(prefixRange("e"))]).toHaveLength(600);
      });
    });

    describe("durability across close", () => {
      it("keeps committed puts and removes through close and reopen", async () => {
        const users = store.table("users");
        await store.write(() => {
          for (let i = 0; i < 100; i++) users.put(`u${i}`, { i });
        });
        await store.write(() => {
          users.remove("u5");
          users.put("u6", { i: 600 });
        });
        await reopen();
        const reopened = store.table("users");
        expect(reopened.get("u5")).toBeUndefined();
        expect(reopened.get("u6")).toEqual({ i: 600 });
        expect(reopened.get("u99")).toEqual({ i: 99 });
        expect([...reopened.range({})]).toHaveLength(99);
      });

      it("commits writes still queued when close is called", async () => {
        const users = store.table("users");
        const pending = store.write(() => users.put("late", 1));
        await store.close();
        await pending;
        store = await open(dir);
        expect(store.table("users").get("late")).toBe(1);
      });
    });

    describe("values", () => {
      // What msgpackr (with lmdb-js's options) carries through; both stores must agree on it.
      const values: Record<string, unknown> = {
        object: { name: "Ada", nested: { list: [1, "two", { three: 3 }], empty: {} } },
        array: [1, null, true, "x", [2, [3]], { a: 1 }],
        null: null,
        booleans: [true, false],
        numbers: [0, -1, 1.5, -2.25, 255, 65_536, 2 ** 32, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1e300],
        specialNumbers: [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
        strings: ["", "plain", "é 😀 \u0000 \uffff", "x".repeat(70_000)],
        bigString: "0123456789abcdef".repeat(64 * 1024),
        // More keys than msgpack's 16-bit map header holds: a client can send such attributes.
        wideObject: Object.fromEntries(Array.from({ length: 70_000 }, (_, index) => [`k${index}`, index])),
        date: new Date("2024-02-29T12:34:56.789Z"),
        bytes: Buffer.from([0, 1, 2, 254, 255]),
        undefinedProperty: { present: 1, missing: undefined },
        bigint: 12_345_678_901_234_567n,
      };

      it("round-trips values through a write and through a reopen", async () => {
        const table = store.table("features");
        await store.write(() => {
          for (const [k, v] of Object.entries(values)) table.put(k, v);
          table.put("map", new Map<string, unknown>([["a", 1], ["b", { c: 2 }]]));
        });
        const check = (read: (k: string) => unknown): void => {
          for (const [k, v] of Object.entries(values)) {
            const got = read(k);
            if (Buffer.isBuffer(v)) expect(Buffer.from(got as Uint8Array).equals(v), k).toBe(true);
            else expect(got, k).toStrictEqual(v);
          }
          expect(read("date")).toBeInstanceOf(Date);
          // Without msgpackr records an object and a Map are the same msgpack map: both come back as objects.
          expect(read("map")).toStrictEqual({ a: 1, b: { c: 2 } });
          expect(Object.keys(read("undefinedProperty") as object)).toEqual(["present", "missing"]);
        };
        check((k) => table.get(k));
        await reopen();
        check((k) => store.table("features").get(k));
      });

      it("turns a Set into an array and a class instance into a plain object", async () => {
        class Point {
          constructor(
            readonly x: number,
            readonly y: number,
          ) {}
        }
        const table = store.table("features");
        await store.write(() => {
          table.put("set", new Set([1, 2]));
          table.put("point", new Point(1, 2));
        });
        expect(table.get("set")).toEqual([1, 2]);
        expect(table.get("point")).toStrictEqual({ x: 1, y: 2 });
      });

      it("hands out a fresh copy on every read", async () => {
        const table = store.table<{ list: number[] }>("features");
        const original = { list: [1, 2] };
        await store.write(() => table.put("k", original));
        original.list.push(3);
        const first = table.get("k")!;
        first.list.push(4);
        expect(table.get("k")).toEqual({ list: [1, 2] });
      });
    });
  });
}
