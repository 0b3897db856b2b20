/**
 * The reference evaluator `@bucketco/flag-evaluation`, set up the way the Bucket Node SDK does when it evaluates
 * locally: one `newEvaluator` per feature for targeting and one for config, built once, called per context.
 */
import { newEvaluator, type RuleFilter } from "@bucketco/flag-evaluation";
import type { FeatureDefinition } from "../../src/evaluation/index.js";

export interface ReferenceFeature {
  key: string;
  enabled: ReturnType<typeof newEvaluator<boolean>>;
  config: ReturnType<typeof newEvaluator<{ key: string; payload: unknown }>>;
}

export function buildReference(definitions: readonly FeatureDefinition[]): ReferenceFeature[] {
  return definitions.map((definition) => ({
    key: definition.key,
    enabled: newEvaluator(definition.targeting.rules.map((rule) => ({ filter: rule.filter as RuleFilter, value: true }))),
    config: newEvaluator(
      definition.config.variants.map((variant) => ({ filter: variant.filter as RuleFilter, value: { key: variant.key, payload: variant.payload } })),
    ),
  }));
}

/** Evaluates every feature's targeting and config for one context, as `evaluateRuleset` does. */
export function evaluateWithReference(features: readonly ReferenceFeature[], context: Record<string, unknown>): unknown[] {
  const results: unknown[] = [];
  for (const feature of features) results.push(feature.enabled(context, feature.key), feature.config(context, feature.key));
  return results;
}
