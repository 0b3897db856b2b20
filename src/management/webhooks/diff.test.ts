import fc from "fast-check";
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { diffOf, pathKeys, pathSegment } from "./diff.js";

/** JSON values whose keys include dots, backslashes, digits and the empty string: the awkward cases of paths. */
const key = fc.oneof(fc.constantFrom("a", "b", "rules", "0", "1", "", ".", "a.b", "\\", "x\\.y", "__proto__x"), fc.string({ maxLength: 4 }));
const json = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(fc.constant(null), fc.boolean(), fc.integer({ min: -3, max: 3 }), fc.constantFrom("on", "off", "")),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
  ),
})).value;
/** At the top an empty key would share the whole value's path `""` (documented on diffOf); nested ones are fine. */
const container = fc.oneof(fc.array(json, { maxLength: 4 }), fc.dictionary(key.filter((name) => name !== ""), json, { maxKeys: 5 }));

const isContainer = (value: unknown): value is Record<string, unknown> | unknown[] => typeof value === "object" && value !== null;

function read(value: unknown, path: string): { found: boolean; value?: unknown } {
  let current = value;
  for (const segment of pathKeys(path)) {
    if (!isContainer(current) || !Object.prototype.hasOwnProperty.call(current, segment)) return { found: false };
    current = (current as Record<string, unknown>)[segment];
  }
  return { found: true, value: current };
}

/** Applies a diff to `before`, taking new values from `after`: the result must be `after` exactly. */
function patch(before: unknown, after: unknown, diff: ReturnType<typeof diffOf>): unknown {
  let result = structuredClone(before);
  const set = (path: string, value: unknown): void => {
    const keys = pathKeys(path);
    if (keys.length === 0) {
      result = structuredClone(value);
      return;
    }
    let parent = result as Record<string, unknown>;
    for (const segment of keys.slice(0, -1)) parent = parent[segment] as Record<string, unknown>;
    Object.defineProperty(parent, keys.at(-1)!, { value: structuredClone(value), enumerable: true, writable: true, configurable: true });
  };
  for (const path of [...diff.removed].reverse()) {
    const keys = pathKeys(path);
    let parent = result as Record<string, unknown> | unknown[];
    for (const segment of keys.slice(0, -1)) parent = (parent as Record<string, unknown>)[segment] as Record<string, unknown>;
    if (Array.isArray(parent)) parent.splice(Number(keys.at(-1)), 1);
    else delete parent[keys.at(-1)!];
  }
  for (const path of [...diff.changed, ...diff.added]) set(path, read(after, path).value);
  return result;
}

/** Object key order is not part of the value. */
const sameJson = (left: unknown, right: unknown): boolean => isDeepStrictEqual(sortKeys(left), sortKeys(right));
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (isContainer(value)) return Object.fromEntries(Object.keys(value).sort().map((name) => [name, sortKeys((value as Record<string, unknown>)[name])]));
  return value;
}

describe("diffOf", () => {
  it("names added, removed and changed paths at the point where they start", () => {
    const before = { name: "Huddle", rules: [{ attribute: "plan", values: ["pro"] }, { attribute: "country", values: ["FR"] }], config: { colour: "red" }, tags: ["a"] };
    const after = { name: "Huddle call", rules: [{ attribute: "plan", values: ["pro", "team"] }], config: { colour: "red", size: 3 }, owner: { email: "a@example.com" }, tags: "a" };
    expect(diffOf(before, after)).toEqual({
      added: ["rules.0.values.1", "config.size", "owner"],
      removed: ["rules.1"],
      changed: ["name", "tags"],
    });
  });

  it("lists every key as added on creation and removed on deletion", () => {
    expect(diffOf(null, { key: "huddle", enabled: true })).toEqual({ added: ["key", "enabled"], removed: [], changed: [] });
    expect(diffOf({ key: "huddle" }, undefined)).toEqual({ added: [], removed: ["key"], changed: [] });
    expect(diffOf(undefined, undefined)).toEqual({ added: [], removed: [], changed: [] });
    expect(diffOf(1, 2)).toEqual({ added: [], removed: [], changed: [""] });
  });

  it("escapes dots and backslashes inside keys and reads them back", () => {
    const diff = diffOf({ "a.b": 1, "c\\d": { e: 1 } }, { "a.b": 2, "c\\d": { e: 2 } });
    expect(diff.changed).toEqual(["a\\.b", "c\\\\d.e"]);
    expect(diff.changed.map(pathKeys)).toEqual([["a.b"], ["c\\d", "e"]]);
    expect(diffOf({ a: { "": 1 } }, { a: { "": 2 } }).changed.map(pathKeys)).toEqual([["a", ""]]);
    expect(pathSegment("x.y\\z")).toBe("x\\.y\\\\z");
  });

  it("counts a key holding undefined as absent, as JSON would", () => {
    expect(diffOf({ a: 1, b: undefined }, { a: 1 })).toEqual({ added: [], removed: [], changed: [] });
  });

  it("finds nothing between a value and itself or its copy", () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(diffOf(value, value)).toEqual({ added: [], removed: [], changed: [] });
        expect(diffOf(value, structuredClone(value))).toEqual({ added: [], removed: [], changed: [] });
      }),
    );
  });

  it("is symmetric: swapping the sides swaps added and removed", () => {
    fc.assert(
      fc.property(json, json, (before, after) => {
        const forward = diffOf(before, after);
        const backward = diffOf(after, before);
        expect(new Set(backward.added)).toEqual(new Set(forward.removed));
        expect(new Set(backward.removed)).toEqual(new Set(forward.added));
        expect(new Set(backward.changed)).toEqual(new Set(forward.changed));
      }),
    );
  });

  it("is complete and exact: patching before along the diff gives after", () => {
    fc.assert(
      fc.property(container, container, (before, after) => {
        const diff = diffOf(before, after);
        expect(sameJson(patch(before, after, diff), after)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("lists each path once, on the right side, where the values really differ, and none inside another", () => {
    fc.assert(
      fc.property(container, container, (before, after) => {
        const { added, removed, changed } = diffOf(before, after);
        const all = [...added, ...removed, ...changed];
        expect(new Set(all).size).toBe(all.length);
        for (const path of added) expect(read(before, path).found || !read(after, path).found).toBe(false);
        for (const path of removed) expect(read(after, path).found || !read(before, path).found).toBe(false);
        for (const path of changed) {
          const [left, right] = [read(before, path), read(after, path)];
          expect(left.found && right.found).toBe(true);
          expect(sameJson(left.value, right.value)).toBe(false);
        }
        for (const outer of all) for (const inner of all) if (inner !== outer && outer !== "") expect(inner.startsWith(`${outer}.`)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
