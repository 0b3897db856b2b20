import { describe, expect, it } from "vitest";

import {
  CONTEXT_OPERATORS,
  type Filter,
  MAX_FILTER_DEPTH,
  MAX_REPORTED_ISSUES,
  OPERATORS_WITHOUT_VALUES,
  validateConfig,
  validateTargeting,
} from "./rules.js";

const on: () => Filter = () => ({ type: "constant", value: true });

function targeting(...filters: unknown[]) {
  return { rules: filters.map((filter) => ({ filter })) };
}

/** A chain of `levels` filters: negations around a constant, so the constant sits at depth `levels`. */
function nestedNegations(levels: number): unknown {
  let filter: unknown = on();
  for (let level = 1; level < levels; level++) filter = { type: "negation", filter };
  return filter;
}

function expectIssues(result: ReturnType<typeof validateTargeting>, issues: { path: string; message: string }[]) {
  expect(result).toEqual({ ok: false, issues });
}

describe("validateTargeting accepts", () => {
  const valid: [string, Filter][] = [
    ["a constant", { type: "constant", value: false }],
    ["a rollout at 0", { type: "rolloutPercentage", key: "f", partialRolloutAttribute: "company.id", partialRolloutThreshold: 0 }],
    ["a rollout at 100000", { type: "rolloutPercentage", key: "f", partialRolloutAttribute: "user.id", partialRolloutThreshold: 100_000 }],
    ["an empty and", { type: "group", operator: "and", filters: [] }],
    ["an empty or", { type: "group", operator: "or", filters: [] }],
    ["a negation", { type: "negation", filter: on() }],
    [
      "nested groups and negations",
      {
        type: "group",
        operator: "or",
        filters: [
          { type: "negation", filter: { type: "group", operator: "and", filters: [on(), on()] } },
          { type: "context", field: "user.id", operator: "ANY_OF", values: ["1", "2"] },
        ],
      },
    ],
  ];
  for (const [name, filter] of valid) {
    it(name, () => {
      const input = targeting(filter);
      const result = validateTargeting(input);
      expect(result).toEqual({ ok: true, value: input });
    });
  }

  for (const operator of CONTEXT_OPERATORS) {
    it(`operator ${operator} with a value`, () => {
      expect(validateTargeting(targeting({ type: "context", field: "a.b", operator, values: ["1"] })).ok).toBe(true);
    });
  }

  for (const operator of OPERATORS_WITHOUT_VALUES) {
    it(`operator ${operator} without values, or with an empty list`, () => {
      expect(validateTargeting(targeting({ type: "context", field: "a", operator })).ok).toBe(true);
      expect(validateTargeting(targeting({ type: "context", field: "a", operator, values: [] })).ok).toBe(true);
    });
  }

  it("no rules", () => {
    expect(validateTargeting({ rules: [] })).toEqual({ ok: true, value: { rules: [] } });
  });

  it(`nesting exactly ${MAX_FILTER_DEPTH} levels deep`, () => {
    expect(validateTargeting(targeting(nestedNegations(MAX_FILTER_DEPTH))).ok).toBe(true);
  });

  it("the input itself, unknown properties included, so rules are stored exactly as saved", () => {
    const input = { rules: [{ filter: { type: "constant", value: true, note: "kept" }, id: 7 }], version: 3 };
    const result = validateTargeting(input);
    expect(result.ok && result.value).toBe(input);
    expect(input.rules[0]?.filter).toEqual({ type: "constant", value: true, note: "kept" });
  });

  it("the same filter object used twice (a DAG, not a cycle)", () => {
    const shared = on();
    expect(validateTargeting(targeting({ type: "group", operator: "and", filters: [shared, shared] })).ok).toBe(true);
  });
});

describe("validateTargeting rejects", () => {
  it("a missing or non-array rules", () => {
    expectIssues(validateTargeting({}), [{ path: "rules", message: "rules is required" }]);
    expectIssues(validateTargeting({ rules: {} }), [{ path: "rules", message: "rules must be an array" }]);
    expectIssues(validateTargeting(null), [{ path: "", message: "Expected an object but received null" }]);
  });

  it("a rule without a filter", () => {
    expectIssues(validateTargeting({ rules: [{}] }), [{ path: "rules.0.filter", message: "filter is required" }]);
    expectIssues(validateTargeting({ rules: ["x"] }), [{ path: "rules.0", message: 'Expected an object but received "x"' }]);
  });

  it("a filter that is not an object", () => {
    expectIssues(validateTargeting(targeting([on()])), [{ path: "rules.0.filter", message: "A filter must be an object" }]);
  });

  it("an unknown filter type", () => {
    expectIssues(validateTargeting(targeting({ type: "regex" })), [
      {
        path: "rules.0.filter.type",
        message: 'Unknown filter type "regex"; expected one of constant, context, rolloutPercentage, group, negation',
      },
    ]);
  });

  it("an unknown operator, at its path deep in the tree", () => {
    const filter = {
      type: "group",
      operator: "and",
      filters: [on(), on(), { type: "context", field: "a", operator: "MATCHES", values: ["x"] }],
    };
    const result = validateTargeting(targeting(on(), filter));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.issues).toEqual([
      { path: "rules.1.filter.filters.2.operator", message: expect.stringMatching(/^Unknown operator "MATCHES"; expected one of IS, /) },
    ]);
  });

  it("an operator that needs values without any", () => {
    expectIssues(validateTargeting(targeting({ type: "context", field: "a", operator: "GT" })), [
      { path: "rules.0.filter.values", message: "Operator GT needs at least one value" },
    ]);
    expectIssues(validateTargeting(targeting({ type: "context", field: "a", operator: "AFTER", values: [] })), [
      { path: "rules.0.filter.values", message: "Operator AFTER needs at least one value" },
    ]);
  });

  it("values that are not strings, and an empty field", () => {
    expectIssues(validateTargeting(targeting({ type: "context", field: "", operator: "IS", values: ["1", 2] })), [
      { path: "rules.0.filter.field", message: "field must not be empty" },
      { path: "rules.0.filter.values.1", message: "Each value must be a string" },
    ]);
  });

  it("a constant that is not a boolean", () => {
    expectIssues(validateTargeting(targeting({ type: "constant", value: "true" })), [
      { path: "rules.0.filter.value", message: "value must be true or false" },
    ]);
  });

  it("thresholds outside 0..100000 or fractional", () => {
    const rollout = (partialRolloutThreshold: unknown) =>
      targeting({ type: "rolloutPercentage", key: "f", partialRolloutAttribute: "user.id", partialRolloutThreshold });
    const path = "rules.0.filter.partialRolloutThreshold";
    expectIssues(validateTargeting(rollout(-1)), [{ path, message: "partialRolloutThreshold must be at least 0" }]);
    expectIssues(validateTargeting(rollout(100_001)), [{ path, message: "partialRolloutThreshold must be at most 100000" }]);
    expectIssues(validateTargeting(rollout(0.5)), [{ path, message: "partialRolloutThreshold must be an integer" }]);
    expectIssues(validateTargeting(rollout("50")), [{ path, message: "partialRolloutThreshold must be a number" }]);
  });

  it("a rollout without key or attribute", () => {
    expectIssues(
      validateTargeting(targeting({ type: "rolloutPercentage", key: "", partialRolloutThreshold: 1 })),
      [
        { path: "rules.0.filter.key", message: "key must not be empty" },
        { path: "rules.0.filter.partialRolloutAttribute", message: "partialRolloutAttribute is required" },
      ],
    );
  });

  it("a bad group operator, non-array members, a negation without filter", () => {
    expectIssues(validateTargeting(targeting({ type: "group", operator: "xor", filters: [] })), [
      { path: "rules.0.filter.operator", message: 'Unknown group operator "xor"; expected and, or' },
    ]);
    expectIssues(validateTargeting(targeting({ type: "group", operator: "or", filters: on() })), [
      { path: "rules.0.filter.filters", message: "filters must be an array" },
    ]);
    expectIssues(validateTargeting(targeting({ type: "negation" })), [
      { path: "rules.0.filter.filter", message: "filter is required" },
    ]);
  });

  it(`nesting deeper than ${MAX_FILTER_DEPTH} levels`, () => {
    const path = `rules.0.filter${".filter".repeat(MAX_FILTER_DEPTH)}`;
    expectIssues(validateTargeting(targeting(nestedNegations(MAX_FILTER_DEPTH + 1))), [
      { path, message: "Filters may be nested at most 32 levels deep" },
    ]);
  });

  it("absurd nesting (10,000 levels) with one issue, not a stack overflow", () => {
    let filter: unknown = on();
    for (let level = 0; level < 10_000; level++) filter = { type: "group", operator: "and", filters: [filter] };
    const result = validateTargeting(targeting(filter));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.issues).toEqual([
      { path: `rules.0.filter${".filters.0".repeat(MAX_FILTER_DEPTH)}`, message: "Filters may be nested at most 32 levels deep" },
    ]);
  });

  it("a filter that contains itself", () => {
    const group: { type: "group"; operator: "or"; filters: unknown[] } = { type: "group", operator: "or", filters: [] };
    group.filters.push(group, group);
    expectIssues(validateTargeting(targeting(group)), [
      { path: "rules.0.filter.filters.0", message: "A filter must not contain itself" },
      { path: "rules.0.filter.filters.1", message: "A filter must not contain itself" },
    ]);
  });

  it(`with at most ${MAX_REPORTED_ISSUES} issues`, () => {
    const result = validateTargeting(targeting(...Array.from({ length: 500 }, () => ({ type: "nope" }))));
    expect(!result.ok && result.issues.length).toBe(MAX_REPORTED_ISSUES);
  });
});

describe("validateConfig", () => {
  it("accepts variants with and without payload and returns the input", () => {
    const input = {
      variants: [
        { filter: on(), key: "blue", payload: { color: "#00f" } },
        { filter: { type: "negation", filter: on() }, key: "none", payload: null },
        { filter: on(), key: "bare" },
      ],
    };
    const result = validateConfig(input);
    expect(result.ok && result.value).toBe(input);
  });

  it("rejects a variant without key, and a bad filter at its path", () => {
    const result = validateConfig({
      variants: [
        { filter: on(), payload: 1 },
        { filter: { type: "context", field: "a", operator: "IS" }, key: "k", payload: 1 },
      ],
    });
    expect(result).toEqual({
      ok: false,
      issues: [{ path: "variants.0.key", message: "key is required" }],
    });
    const second = validateConfig({ variants: [{ filter: { type: "context", field: "a", operator: "IS" }, key: "k" }] });
    expect(second).toEqual({
      ok: false,
      issues: [{ path: "variants.0.filter.values", message: "Operator IS needs at least one value" }],
    });
  });

  it("rejects a missing variants list and an empty key", () => {
    expect(validateConfig({})).toEqual({ ok: false, issues: [{ path: "variants", message: "variants is required" }] });
    expect(validateConfig({ variants: [{ filter: on(), key: "" }] })).toEqual({
      ok: false,
      issues: [{ path: "variants.0.key", message: "key must not be empty" }],
    });
  });
});
