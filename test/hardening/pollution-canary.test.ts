/**
 * The fuzz suite's hidden check relies on a canary feature turning on when `Object.prototype` carries a planted
 * field. This proves the canary would see it: the evaluator flattens contexts with for…in (as the reference does),
 * which walks inherited enumerable members, so a polluted prototype shows up as a context field.
 */
import { afterEach, describe, expect, it } from "vitest";
import { compileRuleset, evaluateRuleset } from "../../src/evaluation/index.js";
import type { FeatureDefinition } from "../../src/evaluation/index.js";
import { CANARY_FEATURE, CANARY_FIELDS } from "./support/world.js";

const canary: FeatureDefinition = {
  key: CANARY_FEATURE,
  stage: null,
  targeting: { version: 1, rules: CANARY_FIELDS.map((field) => ({ filter: { type: "context", field, operator: "SET" } })) },
  config: { version: 0, variants: [] },
};

const context = () => ({ user: { id: "canary-user" }, company: { id: "canary-co" } });

describe("the pollution canary", () => {
  afterEach(() => {
    delete (Object.prototype as Record<string, unknown>).polluted;
    delete (Object.prototype as Record<string, unknown>).isAdmin;
  });

  it("is off for a clean process", () => {
    const [item] = evaluateRuleset(compileRuleset([canary]), context());
    expect(item!.isEnabled).toBe(false);
  });

  it.each(["polluted", "isAdmin"])("turns on when Object.prototype.%s is planted", (field) => {
    const ruleset = compileRuleset([canary]);
    (Object.prototype as Record<string, unknown>)[field] = 1;
    const [item] = evaluateRuleset(ruleset, context());
    delete (Object.prototype as Record<string, unknown>)[field];
    expect(item!.isEnabled).toBe(true);
  });
});
