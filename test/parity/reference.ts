/**
 * The reference evaluator (`@bucketco/flag-evaluation`, what the Bucket Node SDK runs locally) wrapped to answer in
 * the shape of our `evaluateRuleset`, so parity tests — unit and end-to-end — compare like with like.
 */
import { newEvaluator, type RuleFilter } from "@bucketco/flag-evaluation";

import type { EvaluatedFeature, EvaluateOptions, FeatureDefinition } from "../../src/evaluation/index.js";

type ReferenceEvaluator<T extends object | boolean> = ReturnType<typeof newEvaluator<T>>;

export interface ReferenceRuleset {
  features: {
    definition: FeatureDefinition;
    enabled: ReferenceEvaluator<boolean>;
    config: ReferenceEvaluator<{ key: string; payload: unknown }>;
  }[];
}

/** Builds the reference's evaluators the way the Node SDK does when it loads feature definitions. */
export function compileReference(definitions: readonly FeatureDefinition[]): ReferenceRuleset {
  return {
    features: definitions.map((definition) => ({
      definition,
      enabled: newEvaluator(
        definition.targeting.rules.map((rule) => ({ filter: rule.filter as RuleFilter, value: true })),
      ),
      config: newEvaluator(
        definition.config.variants.map((variant) => ({
          filter: variant.filter as RuleFilter,
          value: { key: variant.key, payload: variant.payload },
        })),
      ),
    })),
  };
}

/** Evaluates with the reference and shapes the answer like the hosted service's `features` items. */
export function evaluateReference(
  ruleset: ReferenceRuleset,
  context: Record<string, unknown>,
  options: EvaluateOptions = {},
): EvaluatedFeature[] {
  const results: EvaluatedFeature[] = [];
  for (const { definition, enabled, config } of ruleset.features) {
    if (options.onlyKey !== undefined && definition.key !== options.onlyKey) continue;
    const enabledResult = enabled(context, definition.key);
    const isEnabled = enabledResult.value ?? false;
    if (options.onlyEnabled === true && !isEnabled) continue;
    const configResult = config(context, definition.key);
    const variant = configResult.value;
    results.push({
      key: definition.key,
      isEnabled,
      targetingVersion: definition.targeting.version,
      stage: definition.stage,
      ruleEvaluationResults: enabledResult.ruleEvaluationResults,
      missingContextFields: enabledResult.missingContextFields ?? [],
      config: {
        key: variant?.key ?? null,
        // The SDK leaves an absent payload undefined; the service's JSON says null.
        payload: variant === undefined ? null : (variant.payload ?? null),
        version: definition.config.version,
        targetingVersion: definition.config.version,
        default: variant === undefined,
        ruleEvaluationResults: configResult.ruleEvaluationResults,
        missingContextFields: configResult.missingContextFields ?? [],
      },
    });
  }
  return results;
}

/** One-shot convenience: compile and evaluate. */
export function evaluateWithReference(
  definitions: readonly FeatureDefinition[],
  context: Record<string, unknown>,
  options?: EvaluateOptions,
): EvaluatedFeature[] {
  return evaluateReference(compileReference(definitions), context, options);
}
