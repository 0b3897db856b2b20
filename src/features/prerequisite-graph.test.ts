/**
 * The prerequisite graph's checks, and the bound they keep: the deepest chain allowed, each feature's rules as deep
 * as a save allows, still compiles once the prerequisites are compiled in (served-rules.ts).
 */
import { describe, expect, it } from "vitest";
import { compileRuleset, evaluateRuleset, type FeatureDefinition } from "../evaluation/index.js";
import { MAX_FILTER_DEPTH, validateTargeting } from "../schemas/rules.js";
import type { EnvironmentFeatureState, Prerequisite } from "./feature-records.js";
import { cycleThrough, deepestChain, dependentsOf, describeCycle, MAX_PREREQUISITE_DEPTH } from "./prerequisite-graph.js";
import { servedRulesOf } from "./served-rules.js";

const on = (feature: string): Prerequisite => ({ feature, enabled: true });

describe("prerequisite graph", () => {
  const graph = new Map<string, Prerequisite[]>([
    ["b", [on("a")]],
    ["c", [on("b"), { feature: "a", enabled: false }]],
  ]);

  it("finds the cycle a new list would close, from the feature back to itself", () => {
    expect(cycleThrough(graph, "a", [on("c")])).toEqual(["a", "c", "b", "a"]);
    expect(describeCycle(cycleThrough(graph, "a", [on("c")])!)).toBe("a → c → b → a");
    expect(cycleThrough(graph, "a", [on("b")])).toEqual(["a", "b", "a"]);
    expect(cycleThrough(graph, "d", [on("c"), on("b")])).toBeUndefined();
    // Replacing a feature's own list: its old edges no longer count.
    expect(cycleThrough(graph, "b", [])).toBeUndefined();
  });

  it("measures the longest chain and names dependents", () => {
    expect(deepestChain(graph)).toBe(2);
    expect(deepestChain(new Map())).toBe(0);
    expect(dependentsOf(graph, "a")).toEqual(["b", "c"]);
    expect(dependentsOf(graph, "c")).toEqual([]);
  });

  it(`compiles the deepest chain allowed (${MAX_PREREQUISITE_DEPTH} below a feature) over rules ${MAX_FILTER_DEPTH} levels deep`, () => {
    // A rule nested as deep as a save allows: negations around a context filter, true for plan=pro.
    let deep: unknown = { type: "context", field: "company.plan", operator: "IS", values: ["pro"] };
    for (let level = 1; level + 2 < MAX_FILTER_DEPTH; level += 2) deep = { type: "negation", filter: { type: "negation", filter: deep } };
    deep = { type: "group", operator: "and", filters: [deep] };
    expect(validateTargeting({ rules: [{ filter: deep }] }).ok).toBe(true);
    expect(validateTargeting({ rules: [{ filter: { type: "negation", filter: deep } }] }).ok).toBe(false);
    const keys = Array.from({ length: MAX_PREREQUISITE_DEPTH + 1 }, (_, index) => `f${index}`);
    const chain = new Map(keys.slice(1).map((key, index) => [key, [on(keys[index]!)]]));
    expect(deepestChain(chain)).toBe(MAX_PREREQUISITE_DEPTH);
    const states = keys.map((key) => ({
      key,
      state: { targeting: { version: 1, rules: [{ filter: deep }, { filter: deep }] }, config: { version: 0, variants: [] }, prerequisites: chain.get(key) ?? [] } as EnvironmentFeatureState,
    }));
    const served = servedRulesOf(states);
    const definitions: FeatureDefinition[] = keys.map((key) => ({ key, stage: null, targeting: { version: 1, rules: served.get(key) as FeatureDefinition["targeting"]["rules"] }, config: { version: 0, variants: [] } }));
    const ruleset = compileRuleset(definitions);
    expect(ruleset.compileFailures).toEqual([]);
    const last = keys.at(-1)!;
    expect(evaluateRuleset(ruleset, { company: { plan: "pro" } }, { onlyKey: last })[0]!.isEnabled).toBe(true);
    expect(evaluateRuleset(ruleset, { company: { plan: "free" } }, { onlyKey: last })[0]!.isEnabled).toBe(false);
  });
});
