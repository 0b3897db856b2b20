import { flattenJSON } from "@bucketco/flag-evaluation";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

import { contextValue } from "../../test/parity/arbitraries.js";
import { flattenContext, MAX_CONTEXT_DEPTH } from "./flatten-context.js";

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
