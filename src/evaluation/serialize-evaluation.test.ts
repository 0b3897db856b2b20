import { describe, expect, it } from "vitest";

import type { Filter } from "../schemas/rules.js";
import { compileRuleset } from "./compile-ruleset.js";
import { evaluateRuleset } from "./evaluate-ruleset.js";
import { serializeEvaluation } from "./serialize-evaluation.js";
import type { EvaluatedFeature, FeatureDefinition } from "./types.js";

const on: Filter = { type: "constant", value: true };
const idIs = (id: string): Filter => ({ type: "context", field: "user.id", operator: "IS", values: [id] });

function feature(key: string, stage: string | null = null): FeatureDefinition {
  return {
    key,
    stage,
    targeting: { version: 2, rules: [{ filter: idIs("1") }, { filter: { type: "negation", filter: idIs("2") } }] },
    config: {
      version: 4,
      variants: [
        { filter: idIs("1"), key: "one", payload: { text: 'quote " and \u2028 and ü', list: [1, null] } },
        { filter: on, key: "rest", payload: "plain" },
      ],
    },
  };
}

/** What serializeEvaluation promises to equal. */
const generic = (results: readonly EvaluatedFeature[]) =>
  JSON.stringify(Object.fromEntries(results.map((item) => [item.key, item])));

describe("serializeEvaluation", () => {
  const ruleset = compileRuleset([feature("alpha", "beta"), feature('we"ird\\key'), feature("ünï", "GA")]);

  it("equals JSON.stringify of the features map, matched variant or not", () => {
    for (const context of [{}, { user: { id: "1" } }, { user: { id: "2" } }]) {
      const results = evaluateRuleset(ruleset, context);
      expect(serializeEvaluation(results)).toBe(generic(results));
    }
    expect(serializeEvaluation([])).toBe("{}");
  });

  it("writes the documented item shape", () => {
    const text = serializeEvaluation(evaluateRuleset(ruleset, { user: { id: "1" } }, { onlyKey: "alpha" }));
    expect(JSON.parse(text)).toEqual({
      alpha: {
        key: "alpha",
        isEnabled: true,
        targetingVersion: 2,
        stage: "beta",
        ruleEvaluationResults: [true, true],
        missingContextFields: [],
        config: {
          key: "one",
          payload: { text: 'quote " and \u2028 and ü', list: [1, null] },
          version: 4,
          targetingVersion: 4,
          default: false,
          ruleEvaluationResults: [true, true],
          missingContextFields: [],
        },
      },
    });
  });

  it("includes fields added to an item after evaluation, and changed values", () => {
    const results = evaluateRuleset(ruleset, {});
    Object.assign(results[0] as object, { optInEnabled: true, optIn: { isOptedIn: false } });
    (results[1] as EvaluatedFeature).isEnabled = true;
    (results[2] as EvaluatedFeature).config.payload = { replaced: true };
    const text = serializeEvaluation(results);
    expect(text).toBe(generic(results));
    expect(text).toContain('"optInEnabled":true');
    expect(text).toContain('{"replaced":true}');
  });

  it("orders array-index keys first, as JSON.stringify does", () => {
    const results = evaluateRuleset(compileRuleset([feature("b"), feature("10"), feature("2")]), {});
    const text = serializeEvaluation(results);
    expect(text).toBe(generic(results));
    expect(Object.keys(JSON.parse(text) as object)).toEqual(["2", "10", "b"]);
  });

  it("writes a key given twice once, with the later item, as the map would", () => {
    const first = evaluateRuleset(ruleset, {}, { onlyKey: "alpha" });
    const second = evaluateRuleset(ruleset, { user: { id: "1" } }, { onlyKey: "alpha" });
    const results = [...first, ...evaluateRuleset(ruleset, {}, { onlyKey: "ünï" }), ...second];
    expect(serializeEvaluation(results)).toBe(generic(results));
    const other = evaluateRuleset(compileRuleset([feature("alpha")]), {});
    expect(serializeEvaluation([...first, ...other])).toBe(generic([...first, ...other]));
  });

  it("accepts plain objects of the same shape", () => {
    const plain = evaluateRuleset(ruleset, {}).map((item) => structuredClone({ ...item, config: { ...item.config } }));
    expect(serializeEvaluation(plain)).toBe(generic(plain));
  });
});
