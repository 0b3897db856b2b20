/**
 * The reference evaluators — `@bucketco/flag-evaluation` 0.2.1 (what the Bucket Node SDK runs locally) and
 * `@reflag/flag-evaluation` 1.0.1 (the Reflag Node SDK's) — wrapped to answer in the shape of our `evaluateRuleset`,
 * so parity tests — unit and end-to-end — compare like with like, against each.
 */
import { newEvaluator as newBucketEvaluator, type RuleFilter } from "@bucketco/flag-evaluation";
import { newEvaluator as newReflagEvaluator } from "@reflag/flag-evaluation";

import type { EvaluatedFeature, EvaluateOptions, FeatureDefinition } from "../../src/evaluation/index.js";

type ReferenceEvaluator<T extends object | boolean> = ReturnType<typeof newBucketEvaluator<T>>;

/** Both references build evaluators the same way; only their names differ (`featureKey` / `flagKey`). */
type NewEvaluator = <T extends object | boolean>(rules: { filter: RuleFilter; value: T }[]) => ReferenceEvaluator<T>;

/** The references the parity suites hold Switchyard to, by package. */
export const REFERENCES = {
  "@bucketco/flag-evaluation": newBucketEvaluator as NewEvaluator,
  "@reflag/flag-evaluation": newReflagEvaluator as unknown as NewEvaluator,
} as const;
export type ReferenceName = keyof typeof REFERENCES;
export const REFERENCE_NAMES = Object.keys(REFERENCES) as ReferenceName[];

export interface ReferenceRuleset {
  features: {
    definition: FeatureDefinition;
    enabled: ReferenceEvaluator<boolean>;
    config: ReferenceEvaluator<{ key: string; payload: unknown }>;
  }[];
}

/** Builds the reference's evaluators the way the Node SDK does when it loads feature definitions. */
export function compileReference(definitions: readonly FeatureDefinition[], reference: ReferenceName = "@bucketco/flag-evaluation"): ReferenceRuleset {
  const newEvaluator = REFERENCES[reference];
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
  reference: ReferenceName = "@bucketco/flag-evaluation",
): EvaluatedFeature[] {
  return evaluateReference(compileReference(definitions, reference), context, options);
}
