/**
 * The Unleash mapping (API.md §13.3) as a pure function, the cases a real Unleash cannot be made to show (every
 * strategy disabled while enabled, a segment id that does not exist) included. What it builds is evaluated by the
 * reference evaluator `@reflag/flag-evaluation`, the semantics SDKs run, against Unleash's documented answers.
 */
import { evaluateFlagRules } from "@reflag/flag-evaluation";
import { describe, expect, it } from "vitest";
import { mapUnleash, type UnleashInput } from "./unleash-mapping.js";
import type { UnleashConstraint, UnleashFeature, UnleashStrategy } from "./unleash-schemas.js";

const ENVIRONMENTS = { production: "prod" };

function feature(strategies: UnleashStrategy[], extra: Partial<UnleashFeature> = {}, enabled = true): UnleashFeature {
  return { name: "f", description: "d", environments: [{ name: "production", enabled, strategies, variants: [] }], ...extra };
}

function mapOne(input: Partial<UnleashInput> & { features: UnleashFeature[] }) {
  const { document, warnings } = mapUnleash({ segments: [], environments: ENVIRONMENTS, ...input });
  return { environment: document.features[0]!.environments.prod!, warnings };
}

/** Whether the mapped rules serve `context` (nested, as SDKs send it), by the reference evaluator. */
function serves(rules: unknown[], context: Record<string, unknown>): boolean {
  const result = evaluateFlagRules({ flagKey: "f", rules: (rules as { filter: never }[]).map((rule) => ({ filter: rule.filter, value: true })), context });
  return result.value === true;
}

const constrained = (...constraints: UnleashConstraint[]): UnleashStrategy => ({ id: "s1", name: "default", constraints });

describe("Unleash mapping", () => {
  it("maps enabled/disabled environments and strategy lists as Unleash serves them", () => {
    expect(mapOne({ features: [feature([], {}, false)] }).environment.rules).toEqual([]);
    expect(mapOne({ features: [feature([])] }).environment.rules).toEqual([{ filter: { type: "constant", value: true } }]);
    const disabled = mapOne({ features: [feature([{ id: "s1", name: "default", disabled: true }])] });
    expect(disabled.environment.rules).toEqual([]);
    expect(disabled.warnings.map((warning) => warning.code)).toEqual(["ALL_STRATEGIES_DISABLED"]);
    const absent = mapUnleash({ features: [{ name: "g", environments: [] }], segments: [], environments: ENVIRONMENTS });
    expect(absent.document.features[0]!.environments.prod!.rules).toEqual([]);
    // A parent left out of the import cannot be required: the child serves nobody.
    const dependent = mapOne({ features: [feature([{ name: "default" }], { dependencies: [{ feature: "parent" }] })] });
    expect(dependent.environment.rules).toEqual([]);
    expect(dependent.warnings[0]).toMatchObject({ key: "f", environment: "prod", code: "UNMAPPED_DEPENDENCY", message: expect.stringContaining("parent, which is not imported") });
  });

  it("maps dependencies on imported parents to prerequisites (on by default, or off); variant dependencies stay unmapped", () => {
    const parent = { ...feature([constrained({ contextName: "plan", operator: "IN", values: ["pro"] })]), name: "parent" };
    const other = { ...feature([{ name: "default" }]), name: "other" };
    const child = feature([{ name: "default" }], { dependencies: [{ feature: "parent" }, { feature: "other", enabled: false }] });
    const mapped = mapUnleash({ features: [parent, other, child], segments: [], environments: ENVIRONMENTS });
    expect(mapped.warnings).toEqual([]);
    const byKey = Object.fromEntries(mapped.document.features.map((each) => [each.key, each.environments.prod!]));
    expect(byKey.f).toEqual({ rules: [{ filter: { type: "constant", value: true } }], variants: [], prerequisites: [{ feature: "parent", enabled: true }, { feature: "other", enabled: false }] });
    expect(byKey.parent!.prerequisites).toEqual([]);
    // A child disabled in an environment keeps its prerequisites there (it serves nobody by its own rules anyway).
    const off = mapUnleash({ features: [parent, feature([{ name: "default" }], { dependencies: [{ feature: "parent" }] }, false)], segments: [], environments: ENVIRONMENTS });
    expect(off.document.features[1]!.environments.prod).toEqual({ rules: [], variants: [], prerequisites: [{ feature: "parent", enabled: true }] });
    const variants = mapUnleash({ features: [parent, feature([{ name: "default" }], { dependencies: [{ feature: "parent", variants: ["blue", "green"] }] })], segments: [], environments: ENVIRONMENTS });
    expect(variants.document.features[1]!.environments.prod).toEqual({ rules: [], variants: [], prerequisites: [] });
    expect(variants.warnings).toEqual([
      expect.objectContaining({ key: "f", environment: "prod", code: "UNMAPPED_DEPENDENCY", message: expect.stringContaining("variants blue, green of parent") }),
    ]);
  });

  it("keeps the AND of constraints with Unleash's numeric, list and text semantics", () => {
    const cases: [UnleashConstraint, Record<string, unknown>, boolean][] = [
      [{ contextName: "seats", operator: "NUM_GTE", value: "10" }, { company: { seats: "10" } }, true],
      [{ contextName: "seats", operator: "NUM_GTE", value: "10" }, { company: { seats: "9.99" } }, false],
      [{ contextName: "seats", operator: "NUM_GTE", value: "10" }, { company: { seats: "lots" } }, false],
      [{ contextName: "seats", operator: "NUM_GTE", value: "10" }, {}, false],
      [{ contextName: "seats", operator: "NUM_LTE", value: "10" }, { company: { seats: "10" } }, true],
      [{ contextName: "seats", operator: "NUM_LTE", value: "10" }, { company: { seats: "11" } }, false],
      [{ contextName: "seats", operator: "NUM_EQ", value: "10" }, { company: { seats: "10.0" } }, true],
      [{ contextName: "seats", operator: "NUM_EQ", value: "10" }, { company: { seats: "10.5" } }, false],
      [{ contextName: "seats", operator: "NUM_GT", value: "10" }, { company: { seats: "11" } }, true],
      [{ contextName: "seats", operator: "NUM_LT", value: "10" }, { company: { seats: "11" } }, false],
      [{ contextName: "plan", operator: "IN", values: [" pro ", ""] }, { company: { plan: "pro" } }, true],
      [{ contextName: "plan", operator: "IN", values: ["pro"] }, { company: { plan: "Pro" } }, false],
      [{ contextName: "plan", operator: "NOT_IN", values: ["free"] }, {}, true],
      [{ contextName: "plan", operator: "NOT_IN", values: ["free"] }, { company: { plan: "free" } }, false],
      [{ contextName: "plan", operator: "IN", values: ["free"], inverted: true }, { company: { plan: "pro" } }, true],
      [{ contextName: "email", operator: "STR_CONTAINS", values: ["@ACME", "@initech"], caseInsensitive: true }, { user: { email: "a@acme.com" } }, true],
      [{ contextName: "email", operator: "STR_CONTAINS", values: ["@acme"], caseInsensitive: true }, { user: { email: "a@globex.com" } }, false],
      [{ contextName: "userId", operator: "IN", values: ["u1"] }, { user: { id: "u1" } }, true],
      [{ contextName: "companyId", operator: "IN", values: ["c1"] }, { company: { id: "c1" } }, true],
    ];
    for (const [constraint, context, expected] of cases) {
      const { environment, warnings } = mapOne({ features: [feature([constrained(constraint)])] });
      expect(warnings, JSON.stringify(constraint)).toEqual([]);
      expect(serves(environment.rules!, context), `${JSON.stringify(constraint)} with ${JSON.stringify(context)}`).toBe(expected);
    }
  });

  it("leaves out strategies that can never hold, and drops constraints that always hold", () => {
    const never = [
      constrained({ contextName: "plan", operator: "IN", values: [""] }),
      constrained({ contextName: "seats", operator: "NUM_GT", value: "many" }),
      constrained({ contextName: "plan", operator: "NOT_IN", values: [], inverted: true }),
      { id: "s2", name: "default", segments: [404] },
      { id: "s3", name: "flexibleRollout", parameters: { rollout: "0", stickiness: "default" } },
      { id: "s4", name: "userWithId", parameters: { userIds: " , " } },
    ];
    for (const strategy of never) {
      const mapped = mapOne({ features: [feature([strategy])] });
      expect(mapped.environment.rules, JSON.stringify(strategy)).toEqual([]);
      expect(mapped.warnings, JSON.stringify(strategy)).toEqual([]);
    }
    const always = mapOne({ features: [feature([constrained({ contextName: "plan", operator: "NOT_IN", values: [] }), { name: "userWithId", parameters: { userIds: "a, b,,c" } }])] });
    expect(always.environment.rules).toEqual([
      { filter: { type: "constant", value: true } },
      { filter: { type: "context", field: "user.id", operator: "ANY_OF", values: ["a", "b", "c"] } },
    ]);
  });

  it("leaves out, with a warning, whatever has no exact equivalent, and never widens", () => {
    const unmapped: [UnleashStrategy, string][] = [
      [constrained({ contextName: "email", operator: "STR_CONTAINS", values: ["A"] }), "UNMAPPED_OPERATOR"],
      [constrained({ contextName: "email", operator: "STR_STARTS_WITH", values: ["a"] }), "UNMAPPED_OPERATOR"],
      [constrained({ contextName: "currentTime", operator: "DATE_AFTER", value: "2026-01-01T00:00:00Z" }), "UNMAPPED_OPERATOR"],
      [constrained({ contextName: "version", operator: "SEMVER_EQ", value: "1.0.0" }), "UNMAPPED_OPERATOR"],
      [constrained({ contextName: "sessionId", operator: "IN", values: ["s"] }), "UNMAPPED_CONTEXT_FIELD"],
      [{ id: "s1", name: "remoteAddress", parameters: { IPs: "10.0.0.1" } }, "UNMAPPED_STRATEGY"],
      [{ id: "s1", name: "flexibleRollout", parameters: { rollout: "30", stickiness: "random" } }, "UNMAPPED_STRATEGY"],
      [{ id: "s1", name: "flexibleRollout", parameters: { rollout: "30", stickiness: "sessionId" } }, "UNMAPPED_CONTEXT_FIELD"],
    ];
    for (const [strategy, code] of unmapped) {
      const mapped = mapOne({ features: [feature([strategy, { id: "s9", name: "userWithId", parameters: { userIds: "kept" } }])] });
      expect(mapped.environment.rules, code).toEqual([{ filter: { type: "context", field: "user.id", operator: "ANY_OF", values: ["kept"] } }]);
      expect(mapped.warnings, code).toEqual([expect.objectContaining({ key: "f", environment: "prod", strategyId: "s1", code })]);
    }
  });

  it("keeps a rollout's share on the mapped attribute, says the users differ, and maps context fields as asked", () => {
    const half = mapOne({ features: [feature([{ id: "s1", name: "flexibleRollout", parameters: { rollout: "37.5", stickiness: "default", groupId: "grp" } }])] });
    expect(half.environment.rules).toEqual([{ filter: { type: "rolloutPercentage", key: "grp", partialRolloutAttribute: "user.id", partialRolloutThreshold: 37_500 } }]);
    expect(half.warnings.map((warning) => warning.code)).toEqual(["ROLLOUT_REHASHED", "STICKINESS_FALLBACK"]);
    const byTenant = mapOne({
      features: [feature([{ id: "s1", name: "flexibleRollout", parameters: { rollout: "100", stickiness: "tenant" } }, { id: "s2", name: "gradualRolloutUserId", parameters: { percentage: 10 } }])],
      contextMapping: { tenant: "other.tenant", userId: "user.key" },
    });
    expect(byTenant.environment.rules).toEqual([
      { filter: { type: "context", field: "other.tenant", operator: "SET" } },
      { filter: { type: "rolloutPercentage", key: "f", partialRolloutAttribute: "user.key", partialRolloutThreshold: 10_000 } },
    ]);
    expect(byTenant.warnings.map((warning) => warning.code)).toEqual(["ROLLOUT_REHASHED"]);
    const segment = mapOne({ features: [feature([{ id: "s1", name: "default", segments: [7] }])], segments: [{ id: 7, constraints: [{ contextName: "region", operator: "IN", values: ["eu"] }] }] });
    expect(segment.environment.rules).toEqual([{ filter: { type: "context", field: "company.region", operator: "ANY_OF", values: ["eu"] } }]);
  });

  it("maps variants: overrides first, then the weighted split with cumulative thresholds under the strategy's filter", () => {
    const strategy: UnleashStrategy = {
      id: "s1",
      name: "default",
      constraints: [{ contextName: "plan", operator: "IN", values: ["pro"] }],
      variants: [
        { name: "a", weight: 250, stickiness: "default", payload: { type: "json", value: '{"n":1}' }, overrides: [{ contextName: "userId", values: ["vip"] }] },
        { name: "b", weight: 250, stickiness: "default", payload: { type: "number", value: "2" } },
        { name: "c", weight: 500, stickiness: "default", payload: { type: "string", value: "three" } },
      ],
    };
    const { environment, warnings } = mapOne({ features: [feature([strategy])] });
    const base = { type: "context", field: "company.plan", operator: "ANY_OF", values: ["pro"] };
    const split = (threshold: number) => ({ type: "rolloutPercentage", key: "f.variant", partialRolloutAttribute: "user.id", partialRolloutThreshold: threshold });
    expect(environment.variants).toEqual([
      { filter: { type: "group", operator: "and", filters: [base, { type: "context", field: "user.id", operator: "ANY_OF", values: ["vip"] }] }, key: "a", payload: { n: 1 } },
      { filter: { type: "group", operator: "and", filters: [base, split(25_000)] }, key: "a", payload: { n: 1 } },
      { filter: { type: "group", operator: "and", filters: [base, split(50_000)] }, key: "b", payload: 2 },
      { filter: { type: "group", operator: "and", filters: [base, split(100_000)] }, key: "c", payload: "three" },
    ]);
    expect(warnings.map((warning) => warning.code)).toEqual(["VARIANTS_REHASHED"]);
    const onEnvironment = mapUnleash({
      segments: [],
      environments: ENVIRONMENTS,
      features: [{ name: "f", environments: [{ name: "production", enabled: true, strategies: [constrained({ contextName: "plan", operator: "IN", values: ["pro"] }), { name: "userWithId", parameters: { userIds: "x" } }], variants: [{ name: "only", weight: 1000 }] }] }],
    });
    expect(onEnvironment.document.features[0]!.environments.prod!.variants).toEqual([
      { filter: { type: "group", operator: "or", filters: [base, { type: "context", field: "user.id", operator: "ANY_OF", values: ["x"] }] }, key: "only" },
    ]);
  });
});
