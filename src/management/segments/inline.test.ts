import { describe, expect, it } from "vitest";
import { findCycle, inlineSegments, inlineTargeting, segmentRefs } from "./inline.js";

const pro = { type: "context", field: "company.plan", operator: "IS", values: ["pro"] };
const segments: Record<string, { filter: unknown }> = {
  pro: { filter: pro },
  bigPro: { filter: { type: "group", operator: "and", filters: [{ type: "segment", segmentId: "pro" }, { type: "context", field: "company.seats", operator: "GT", values: ["10"] }] } },
};
const lookup = (id: string) => segments[id];

describe("segment inlining", () => {
  it("finds the segments a tree names, at any depth", () => {
    expect(segmentRefs([{ filter: { type: "negation", filter: { type: "segment", segmentId: "bigPro" } } }])).toEqual(new Set(["bigPro"]));
    expect(segmentRefs([{ filter: pro }])).toEqual(new Set());
  });

  it("replaces segment nodes with their filters, recursively, leaving only the five SDK filter types", () => {
    const inlined = inlineTargeting([{ filter: { type: "negation", filter: { type: "segment", segmentId: "bigPro" } } }], lookup);
    expect(inlined).toEqual({
      ok: true,
      value: [{ filter: { type: "negation", filter: { type: "group", operator: "and", filters: [pro, { type: "context", field: "company.seats", operator: "GT", values: ["10"] }] } } }],
    });
    const rules = [{ filter: pro }];
    expect(inlineSegments(rules, lookup)).toEqual({ ok: true, value: rules });
  });

  it("refuses a missing segment and a tree deeper than the limit once inlined", () => {
    expect(inlineTargeting([{ filter: { type: "segment", segmentId: "nope" } }], lookup)).toEqual({ ok: false, message: "No segment nope." });
    const deep: Record<string, { filter: unknown }> = {};
    let filter: unknown = pro;
    for (let level = 0; level < 31; level++) filter = { type: "negation", filter };
    deep.deep = { filter };
    const result = inlineTargeting([{ filter: { type: "negation", filter: { type: "negation", filter: { type: "segment", segmentId: "deep" } } } }], (id) => deep[id]);
    expect(result.ok).toBe(false);
  });

  it("finds cycles through other segments", () => {
    const withCycle: Record<string, { filter: unknown }> = { a: { filter: { type: "segment", segmentId: "b" } }, b: { filter: { type: "group", operator: "or", filters: [{ type: "segment", segmentId: "c" }] } }, c: { filter: pro } };
    expect(findCycle("c", { type: "segment", segmentId: "a" }, (id) => withCycle[id])).toEqual(["c", "a", "b", "c"]);
    expect(findCycle("a", { type: "segment", segmentId: "c" }, (id) => withCycle[id])).toBeUndefined();
    expect(findCycle("a", { type: "segment", segmentId: "a" }, (id) => withCycle[id])).toEqual(["a", "a"]);
  });
});
