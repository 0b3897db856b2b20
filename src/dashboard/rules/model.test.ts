import { describe, expect, it } from "vitest";
import { diffLines } from "../diff";
import { describe as describeFilter, filterOfType, localIssues, stateOf, thresholdOf, tidy, valuesFor, type Filter } from "./model";

const on: Filter = { type: "constant", value: true };
const off: Filter = { type: "constant", value: false };
const plan: Filter = { type: "context", field: "company.plan", operator: "IS", values: ["pro"] };
const rollout = (threshold: number): Filter => ({ type: "rolloutPercentage", key: "f", partialRolloutAttribute: "company.id", partialRolloutThreshold: threshold });

describe("the features list's off / some / everyone", () => {
  it("reads a targeting's reach from its rules", () => {
    expect(stateOf([])).toBe("off");
    expect(stateOf([{ filter: off }, { filter: rollout(0) }])).toBe("off");
    expect(stateOf([{ filter: plan }, { filter: on }])).toBe("everyone");
    expect(stateOf([{ filter: rollout(100_000) }])).toBe("everyone");
    expect(stateOf([{ filter: { type: "group", operator: "and", filters: [on, rollout(100_000)] } }])).toBe("everyone");
    expect(stateOf([{ filter: { type: "group", operator: "or", filters: [off, rollout(0)] } }])).toBe("off");
    expect(stateOf([{ filter: plan }])).toBe("some");
    expect(stateOf([{ filter: rollout(25_000) }])).toBe("some");
    expect(stateOf([{ filter: { type: "negation", filter: off } }])).toBe("some");
  });
});

describe("rule editing helpers", () => {
  it("keeps the replaced filter inside a new group or NOT", () => {
    expect(filterOfType("group", "f", plan)).toEqual({ type: "group", operator: "and", filters: [plan] });
    expect(filterOfType("negation", "f", plan)).toEqual({ type: "negation", filter: plan });
    expect(filterOfType("rolloutPercentage", "huddle")).toMatchObject({ key: "huddle", partialRolloutThreshold: 50_000 });
  });

  it("fits values to the operator's input", () => {
    expect(valuesFor("SET", ["x"])).toBeUndefined();
    expect(valuesFor("IS", ["a", "b"])).toEqual(["a"]);
    expect(valuesFor("ANY_OF", ["a", "b"])).toEqual(["a", "b"]);
    expect(valuesFor("GT", undefined)).toEqual([""]);
  });

  it("converts percent to thousandths of a percent, clamped", () => {
    expect(thresholdOf(25)).toBe(25_000);
    expect(thresholdOf(0.001)).toBe(1);
    expect(thresholdOf(150)).toBe(100_000);
    expect(thresholdOf(-1)).toBe(0);
  });

  it("describes a tree in words", () => {
    expect(describeFilter({ type: "group", operator: "or", filters: [plan, rollout(25_000)] })).toBe("(company.plan is pro OR 25% by company.id)");
    expect(describeFilter({ type: "negation", filter: { type: "context", field: "user.email", operator: "SET" } })).toBe("NOT user.email is set");
  });
});

describe("history diff", () => {
  it("marks removed and added lines around the common ones", () => {
    expect(diffLines("a\nb\nc", "a\nx\nc")).toEqual([
      { kind: "same", text: "a" },
      { kind: "removed", text: "b" },
      { kind: "added", text: "x" },
      { kind: "same", text: "c" },
    ]);
    expect(diffLines("", "a")).toEqual([{ kind: "added", text: "a" }]);
  });
});

describe("localIssues", () => {
  it("refuses an empty value where the operator compares one, at the server's path", () => {
    expect(localIssues({ type: "context", field: "company.plan", operator: "IS", values: [""] }, "rules.0.filter")).toEqual([{ path: "rules.0.filter.values", message: expect.stringContaining("Enter a value") }]);
    expect(localIssues({ type: "context", field: "company.seats", operator: "GT", values: [""] }, "rules.0.filter")).toHaveLength(1);
    expect(localIssues({ type: "context", field: "company.seats", operator: "GT", values: ["ten"] }, "rules.0.filter")[0]!.message).toBe("Enter a number.");
    expect(localIssues({ type: "context", field: "company.id", operator: "ANY_OF", values: ["", " "] }, "rules.0.filter")[0]!.message).toBe("Enter at least one value.");
  });

  it("accepts operators without values, and finds issues deep in groups and negations", () => {
    expect(localIssues({ type: "context", field: "user.email", operator: "SET" }, "rules.0.filter")).toEqual([]);
    const tree = { type: "group", operator: "and", filters: [{ type: "negation", filter: { type: "context", field: "", operator: "IS", values: ["x"] } }, { type: "segment", segmentId: "" }] } as const;
    expect(localIssues(tree as never, "rules.1.filter").map((issue) => issue.path)).toEqual(["rules.1.filter.filters.0.filter.field", "rules.1.filter.filters.1.segmentId"]);
  });

  it("drops blank lines of a list when saving", () => {
    expect(tidy({ type: "context", field: "company.id", operator: "ANY_OF", values: ["acme", "", "initech"] })).toEqual({ type: "context", field: "company.id", operator: "ANY_OF", values: ["acme", "initech"] });
  });
});
