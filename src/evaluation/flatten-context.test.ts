import { flattenJSON } from "@bucketco/flag-evaluation";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { contextValue } from "../../test/parity/arbitraries.js";
import { fieldTrie, flattenContext, MAX_CONTEXT_DEPTH, resolveFields } from "./flatten-context.js";

const asObject = (flat: Map<string, string>) => Object.fromEntries(flat);

describe("flattenContext", () => {
  it("joins nested keys with dots, indexes arrays and stringifies primitives", () => {
    const context = {
      user: { id: 42, name: "Ada", tags: ["a", 7, true], address: { city: "Oslo" } },
      company: { id: "acme", trial: false, score: 0.5 },
    };
    expect(asObject(flattenContext(context))).toEqual({
      "user.id": "42",
      "user.name": "Ada",
      "user.tags.0": "a",
      "user.tags.1": "7",
      "user.tags.2": "true",
      "user.address.city": "Oslo",
      "company.id": "acme",
      "company.trial": "false",
      "company.score": "0.5",
    });
  });

  it("turns null, empty objects and empty arrays into an empty string and drops undefined", () => {
    const context = { a: null, b: {}, c: [], d: undefined, e: [undefined], f: { g: undefined } };
    const flat = asObject(flattenContext(context));
    expect(flat).toEqual({ a: "", b: "", c: "" });
    expect(flat).toEqual(flattenJSON(context));
  });

  it("gives nothing for an empty context, as the reference does", () => {
    expect(flattenContext({}).size).toBe(0);
    expect(flattenJSON({})).toEqual({});
  });

  it("reproduces the reference's quirks: a top-level empty key adds no dot, a later colliding path wins", () => {
    const context = { "": { x: 1 }, "a.b": 1, a: { b: 2 } };
    expect(asObject(flattenContext(context))).toEqual({ x: "1", "a.b": "2" });
    expect(asObject(flattenContext(context))).toEqual(flattenJSON(context));
  });

  it('leaves out an own "__proto__" key, whose assignment the reference\'s plain object swallows', () => {
    const context = JSON.parse('{"__proto__": "x", "user": {"__proto__": {"id": 1}}}') as Record<string, unknown>;
    const flat = flattenContext(context);
    expect(flat.has("__proto__")).toBe(false);
    expect(asObject(flat)).toEqual({ "user.__proto__.id": "1" });
    expect(Object.keys(flattenJSON(context))).toEqual(["user.__proto__.id"]);
  });

  it("equals the reference flattenJSON on random contexts", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 3 }), contextValue(4)), (context) => {
        expect(asObject(flattenContext(context))).toEqual(flattenJSON(context));
      }),
      { numRuns: 2000 },
    );
  });

  it("stops descending past its depth limit instead of overflowing the stack", () => {
    let deep: Record<string, unknown> = { leaf: "x" };
    for (let level = 0; level < 100_000; level++) deep = { n: deep };
    const flat = flattenContext(deep);
    expect(flat.size).toBe(0);
    const cyclic: Record<string, unknown> = { id: "1" };
    cyclic.self = cyclic;
    const cyclicFlat = flattenContext(cyclic);
    expect(cyclicFlat.get("id")).toBe("1");
    expect(cyclicFlat.get(`${"self.".repeat(MAX_CONTEXT_DEPTH - 1)}id`)).toBe("1");
  });
});

describe("resolveFields", () => {
  /** flattenContext's entries for `fields`, which resolveFields must give exactly. */
  const restricted = (context: unknown, fields: string[]) =>
    new Map([...flattenContext(context as Record<string, unknown>)].filter(([path]) => fields.includes(path)));
  /** The result, or "throws" (null or undefined as the context make both throw). */
  const outcome = (compute: () => Map<string, string>) => {
    try {
      return compute();
    } catch {
      return "throws";
    }
  };
  const expectSame = (context: unknown, fields: string[]) =>
    expect(outcome(() => resolveFields(fieldTrie(fields), context as Record<string, unknown>))).toEqual(
      outcome(() => restricted(context, fields)),
    );

  it("resolves dotted keys, arrays, empty values and colliding paths as flattening does", () => {
    const fields = ["a.b", "a.b.c", "a", "", "a.", "a..b", "x.0", "x.1.y", "e", "n", "0", "__proto__", "__proto__.id", "b"];
    expectSame({ a: { b: 1 }, "a.b": 2 }, fields);
    expectSame({ "a.b": 2, a: { b: 1 } }, fields);
    expectSame({ a: { "": { b: 3 } }, "": { a: { b: 4 }, b: null } }, fields);
    expectSame({ x: ["p", { y: true }], e: {}, n: null, 0: [] }, fields);
    expectSame(["top", { b: 1 }], fields);
    expectSame("abc", fields);
    expectSame({ "": {} }, fields);
    expectSame(JSON.parse('{"__proto__": {"id": 1}, "a": {"__proto__": 5}}'), fields);
    expectSame(Object.create({ inherited: 1, a: { b: "i" } }, { a: { value: { b: "own" }, enumerable: true } }), fields);
    expectSame(Object.create({ a: { b: "inherited only" } }), fields);
  });

  it("matches flattening on random contexts and fields", () => {
    const segment = fc.constantFrom("a", "b", "", "0", "1", "a.b", "user", "id", "__proto__", "toString", ".");
    const fields = fc.array(fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(".")), { maxLength: 6 });
    const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: "small" },
        fc.constantFrom(null, undefined, "", "s", 0, -0, 1.5, true, false),
        fc.array(tie("node"), { maxLength: 3 }),
        fc.dictionary(segment, tie("node"), { maxKeys: 3 }),
      ),
    })).node;
    fc.assert(fc.property(value, fields, (context, wanted) => {
      expectSame(context, wanted);
    }), { numRuns: 3000 });
    fc.assert(fc.property(fc.object(), fc.array(fc.string(), { maxLength: 4 }), (context, wanted) => {
      expectSame(context, wanted);
    }));
    fc.assert(fc.property(contextValue(), fields, (context, wanted) => {
      expectSame(context, wanted);
    }));
  });

  it("walks the whole context, so that a throwing getter anywhere still fails it", () => {
    const throwing = { a: 1, other: Object.defineProperty({}, "x", { enumerable: true, get: () => { throw new Error("no"); } }) };
    expect(() => flattenContext(throwing)).toThrow("no");
    expect(() => resolveFields(fieldTrie(["a"]), throwing)).toThrow("no");
  });

  it("stops at the same depth", () => {
    let deep: unknown = "bottom";
    for (let level = 0; level <= MAX_CONTEXT_DEPTH + 2; level++) deep = { a: deep };
    const paths = [...flattenContext({ a: { b: 1 } }).keys()];
    expectSame(deep, paths);
    const deepPath = Array.from({ length: MAX_CONTEXT_DEPTH + 3 }, () => "a").join(".");
    const near = Array.from({ length: MAX_CONTEXT_DEPTH }, () => "a").join(".");
    expectSame(deep, [deepPath, near, `${near}.a`]);
  });
});
