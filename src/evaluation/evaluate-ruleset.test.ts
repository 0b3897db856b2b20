import { describe, expect, it } from "vitest";

import { evaluateWithReference } from "../../test/parity/reference.js";
import type { Filter } from "../schemas/rules.js";
import { compileRuleset } from "./compile-ruleset.js";
import { evaluateRuleset } from "./evaluate-ruleset.js";
import type { FeatureDefinition } from "./types.js";

const on: Filter = { type: "constant", value: true };
const planIs = (plan: string): Filter => ({ type: "context", field: "company.plan", operator: "IS", values: [plan] });

function feature(key: string, rules: Filter[], variants: FeatureDefinition["config"]["variants"] = []): FeatureDefinition {
  return {
    key,
    stage: "beta",
    targeting: { version: 3, rules: rules.map((filter) => ({ filter })) },
    config: { version: 5, variants },
  };
}

const definitions: FeatureDefinition[] = [
  feature("enterprise-only", [planIs("enterprise")], [
    { filter: planIs("pro"), key: "pro-variant", payload: { limit: 10 } },
    { filter: on, key: "fallback", payload: { limit: 1 } },
  ]),
  feature("everyone", [on]),
  feature("nobody", [], [{ filter: planIs("enterprise"), key: "never", payload: null }]),
];

describe("evaluateRuleset", () => {
  const ruleset = compileRuleset(definitions);

  it("shapes each feature like the hosted service, config evaluated independently of isEnabled", () => {
    const [enterpriseOnly] = evaluateRuleset(ruleset, { company: { plan: "pro" } });
    expect(enterpriseOnly).toEqual({
      key: "enterprise-only",
      isEnabled: false,
      targetingVersion: 3,
      stage: "beta",
      ruleEvaluationResults: [false],
      missingContextFields: [],
      config: {
        key: "pro-variant",
        payload: { limit: 10 },
        version: 5,
        targetingVersion: 5,
        default: false,
        ruleEvaluationResults: [true, true],
        missingContextFields: [],
      },
    });
  });

  it("answers the default config when no variant matches, reporting the variants' missing fields", () => {
    const results = evaluateRuleset(ruleset, {});
    expect(results.map((result) => result.key)).toEqual(["enterprise-only", "everyone", "nobody"]);
    expect(results[0]?.missingContextFields).toEqual(["company.plan"]);
    expect(results[2]?.config).toEqual({
      key: null,
      payload: null,
      version: 5,
      targetingVersion: 5,
      default: true,
      ruleEvaluationResults: [false],
      missingContextFields: ["company.plan"],
    });
    expect(results[1]?.config).toEqual({
      key: null,
      payload: null,
      version: 5,
      targetingVersion: 5,
      default: true,
      ruleEvaluationResults: [],
      missingContextFields: [],
    });
  });

  it("equals the reference helper on the same definitions", () => {
    for (const context of [{}, { company: { plan: "pro" } }, { company: { plan: "enterprise" } }]) {
      expect(evaluateRuleset(ruleset, context)).toEqual(evaluateWithReference(definitions, context));
    }
  });

  it("evaluates only one feature with onlyKey, none for an unknown key", () => {
    expect(evaluateRuleset(ruleset, {}, { onlyKey: "everyone" }).map((result) => result.key)).toEqual(["everyone"]);
    expect(evaluateRuleset(ruleset, {}, { onlyKey: "missing" })).toEqual([]);
    expect(evaluateRuleset(ruleset, {}, { onlyKey: "nobody", onlyEnabled: true })).toEqual([]);
  });

  it("leaves out disabled features with onlyEnabled", () => {
    const enabled = evaluateRuleset(ruleset, { company: { plan: "enterprise" } }, { onlyEnabled: true });
    expect(enabled.map((result) => result.key)).toEqual(["enterprise-only", "everyone"]);
  });

  it("gives every result its own arrays", () => {
    const [first] = evaluateRuleset(ruleset, {}, { onlyKey: "everyone" });
    first?.ruleEvaluationResults.push(false);
    const [second] = evaluateRuleset(ruleset, {}, { onlyKey: "everyone" });
    expect(second?.ruleEvaluationResults).toEqual([true]);
  });

  it("does not throw on contexts that are not plain data", () => {
    const throwing = Object.defineProperty({}, "user", { enumerable: true, get: () => { throw new Error("no"); } });
    const everyone = (context: unknown) =>
      evaluateRuleset(ruleset, context as Record<string, unknown>, { onlyKey: "everyone" })[0]?.isEnabled;
    expect(everyone(throwing)).toBe(true);
    expect(everyone(null)).toBe(true);
    expect(evaluateRuleset(ruleset, null as unknown as Record<string, unknown>)[0]?.missingContextFields).toEqual([
      "company.plan",
    ]);
  });
});

describe("compileRuleset", () => {
  it("disables only the feature whose targeting cannot compile, and says why", () => {
    const broken = feature("broken", [{ type: "context", field: "x", operator: "LIKE", values: ["1"] } as unknown as Filter, on]);
    const ruleset = compileRuleset([broken, feature("fine", [on])]);
    const results = evaluateRuleset(ruleset, { x: "1" });
    expect(results.map((result) => [result.key, result.isEnabled, result.ruleEvaluationResults])).toEqual([
      ["broken", false, [false, false]],
      ["fine", true, [true]],
    ]);
    expect(ruleset.compileFailures).toEqual([
      { key: "broken", part: "targeting", issues: [{ path: "rules.0.filter.operator", message: expect.any(String) }] },
    ]);
  });

  it("keeps a feature enabled when only its config cannot compile, with the default config", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const ruleset = compileRuleset([feature("f", [on], [{ filter: on, key: "v", payload: cyclic }])]);
    const [result] = evaluateRuleset(ruleset, {});
    expect(result?.isEnabled).toBe(true);
    expect(result?.config).toMatchObject({ key: null, payload: null, default: true, ruleEvaluationResults: [false] });
    expect(ruleset.compileFailures.map((failure) => failure.part)).toEqual(["config"]);
  });

  it("never throws on definitions that are not what the types say", () => {
    const junk = [null, { key: 1 }, { key: "no-rules" }, { key: "bad-rules", targeting: { version: 1, rules: "x" } }];
    const ruleset = compileRuleset(junk as unknown as FeatureDefinition[]);
    expect(evaluateRuleset(ruleset, {}).map((result) => [result.key, result.isEnabled, result.targetingVersion])).toEqual([
      ["no-rules", false, 0],
      ["bad-rules", false, 1],
    ]);
    expect(compileRuleset("nope" as unknown as FeatureDefinition[]).features).toEqual([]);
  });

  it("keeps the later of two definitions with one key, in the earlier's place", () => {
    const ruleset = compileRuleset([feature("a", []), feature("b", []), feature("a", [on])]);
    expect(evaluateRuleset(ruleset, {}).map((result) => [result.key, result.isEnabled])).toEqual([
      ["a", true],
      ["b", false],
    ]);
  });

  it("reports a variant without payload as payload null", () => {
    const variants = [{ filter: on, key: "v" }] as FeatureDefinition["config"]["variants"];
    const [result] = evaluateRuleset(compileRuleset([feature("f", [], variants)]), {});
    expect(result?.config).toMatchObject({ key: "v", payload: null, default: false });
  });
});
