import { describe, expect, it } from "vitest";
import { compileRuleset, evaluateRuleset, serializeEvaluation, type FeatureDefinition } from "./index.js";

const offByRules: FeatureDefinition = {
  key: "beta",
  stage: null,
  targeting: { version: 1, rules: [{ filter: { type: "constant", value: false } }] },
  config: { version: 0, variants: [] },
  optIn: { description: "Beta editor" },
};
const plain: FeatureDefinition = { ...offByRules, key: "plain", optIn: undefined };

describe("opt-in", () => {
  const ruleset = compileRuleset([offByRules, plain]);

  it("turns an opt-in feature on for an opted-in user or company, keeping the rule results", () => {
    const [beta] = evaluateRuleset(ruleset, {}, { onlyKey: "beta", optIns: { user: new Set(), company: new Set(["beta"]) } });
    expect(beta).toMatchObject({
      isEnabled: true,
      ruleEvaluationResults: [false],
      optInEnabled: true,
      optIn: { userOptedIn: false, companyOptedIn: true, isOptedIn: true, name: "beta", description: "Beta editor" },
    });
  });

  it("reports the opt-in state when nobody opted in, and leaves other features without opt-in fields", () => {
    const results = evaluateRuleset(ruleset, {}, { optIns: { user: new Set(["plain"]), company: new Set() } });
    expect(results[0]).toMatchObject({ isEnabled: false, optInEnabled: true, optIn: { isOptedIn: false, description: "Beta editor" } });
    expect(results[1]!.isEnabled).toBe(false);
    expect("optIn" in results[1]!).toBe(false);
    expect(JSON.parse(serializeEvaluation(results))).toEqual(JSON.parse(JSON.stringify(Object.fromEntries(results.map((item) => [item.key, item])))));
  });

  it("lists opted-in features under onlyEnabled", () => {
    const results = evaluateRuleset(ruleset, {}, { onlyEnabled: true, optIns: { user: new Set(["beta"]), company: new Set() } });
    expect(results.map((item) => item.key)).toEqual(["beta"]);
  });
});
