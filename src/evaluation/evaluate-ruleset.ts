/** Evaluates a compiled ruleset against one context. Never throws. */
import type { CompiledFeature, CompiledRules, CompiledRuleset } from "./compile-ruleset.js";
import { missingNames, type FilterFn } from "./compile-filter.js";
import type { EvaluationScope } from "./evaluation-scope.js";
import { EvaluatedConfigResult, evaluatedFeature, EvaluatedFeatureResult } from "./evaluated-feature.js";
import { resolveFields } from "./flatten-context.js";
import { beginEvaluation } from "./rollout-slots.js";
import type { EvaluatedFeature, EvaluateOptions, OptInItem } from "./types.js";

/**
 * Evaluates every feature of `ruleset` (or only `options.onlyKey`) for `context`, in definition order. As in the
 * reference, all targeting rules are evaluated (isEnabled: any matched) and all config variants are evaluated (the
 * first match is the variant), each list reporting its own missing fields.
 */
export function evaluateRuleset(
  ruleset: CompiledRuleset,
  context: Record<string, unknown>,
  options: EvaluateOptions = NO_OPTIONS,
): EvaluatedFeature[] {
  // The ruleset's own scope (evaluation is synchronous): no arrays allocated per call.
  const scope = ruleset.scope;
  scope.values = contextValues(ruleset, context);
  beginEvaluation(scope);
  const onlyEnabled = options.onlyEnabled === true;
  const optIns = options.optIns;
  const results: EvaluatedFeature[] = [];
  if (options.onlyKey !== undefined) {
    const feature = ruleset.byKey.get(options.onlyKey);
    const result = feature === undefined ? undefined : evaluateFeature(feature, scope, onlyEnabled, optIns);
    if (result !== undefined) results.push(result);
    return results;
  }
  for (const feature of ruleset.features) {
    const result = evaluateFeature(feature, scope, onlyEnabled, optIns);
    if (result !== undefined) results.push(result);
  }
  return results;
}

const NO_OPTIONS: EvaluateOptions = Object.freeze({});

/** The values of the ruleset's fields in a (nested) context, by field id: what a scope or writeAnswer reads. */
export function contextValues(ruleset: CompiledRuleset, context: Record<string, unknown>): (string | undefined)[] {
  return ruleset.fields.valuesOf(resolveSafely(ruleset, context));
}

function resolveSafely(ruleset: CompiledRuleset, context: Record<string, unknown>): Map<string, string> {
  try {
    // flattenContext's entries for the fields the rules read, without building the others' paths.
    return resolveFields(ruleset.fieldTrie, context);
  } catch {
    // Not an object, or one whose getters throw: nothing usable, so every field is missing.
    return new Map();
  }
}

function evaluateFeature(
  feature: CompiledFeature,
  scope: EvaluationScope,
  onlyEnabled: boolean,
  optIns: EvaluateOptions["optIns"],
): EvaluatedFeature | undefined {
  try {
    const fields = feature.ruleset.fields;
    const ruleResults = evaluateRules(feature.targeting, scope);
    const missing = missingNames(scope, fields);
    const optIn = feature.optIn === undefined ? undefined : optInItem(feature, optIns);
    // Opting in turns a feature on that its rules leave off; the rule results still say what the rules did.
    const isEnabled = ruleResults.includes(true) || optIn?.isOptedIn === true;
    if (onlyEnabled && !isEnabled) return undefined;
    const variantResults = evaluateRules(feature.variantRules, scope);
    const variantMissing = missingNames(scope, fields);
    return evaluatedFeature(feature, isEnabled, ruleResults, missing, variantResults, variantMissing, optIn);
  } catch {
    // Unreachable with compiled closures (they do not throw); kept so that one feature can never fail a request.
    return onlyEnabled ? undefined : disabled(feature);
  }
}

/** The `optIn` item of a feature that allows opt-in, for the context's opt-ins. */
export function optInItem(feature: CompiledFeature, optIns: EvaluateOptions["optIns"]): OptInItem {
  const userOptedIn = optIns?.user.has(feature.key) === true;
  const companyOptedIn = optIns?.company.has(feature.key) === true;
  return { userOptedIn, companyOptedIn, isOptedIn: userOptedIn || companyOptedIn, name: feature.optIn?.name ?? feature.key, description: feature.optIn?.description ?? null };
}

function evaluateRules(rules: CompiledRules, scope: EvaluationScope): boolean[] {
  scope.missingCount = 0;
  if (rules.constantResults !== undefined) return rules.constantResults.slice();
  const runs = rules.runs;
  const count = runs.length;
  // Sized once: the arrays are the results' own (never shared), so they cannot be reused between calls.
  const results = new Array<boolean>(count);
  for (let index = 0; index < count; index++) results[index] = (runs[index] as FilterFn)(scope);
  return results;
}

function disabled(feature: CompiledFeature): EvaluatedFeature {
  const config = new EvaluatedConfigResult(feature.configVersion, null, [], []);
  return new EvaluatedFeatureResult(feature, false, [], [], config);
}
