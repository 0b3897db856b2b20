/**
 * The objects evaluateRuleset returns. They are plain data to every reader (JSON.stringify, spreading, equality), and
 * privately remember what they were computed from, so serializeEvaluation can reuse precomputed JSON fragments.
 */
import type { CompiledFeature, CompiledVariant } from "./compile-ruleset.js";
import type { EvaluatedConfig, EvaluatedFeature, OptInItem } from "./types.js";

/** The `config` of an evaluated feature. */
export class EvaluatedConfigResult implements EvaluatedConfig {
  // Field order is the JSON order of the hosted service's answer.
  key: string | null;
  payload: unknown;
  version: number;
  targetingVersion: number;
  default: boolean;
  ruleEvaluationResults: boolean[];
  missingContextFields: string[];
  readonly #variant: CompiledVariant | null;

  constructor(
    version: number,
    variant: CompiledVariant | null,
    ruleEvaluationResults: boolean[],
    missingContextFields: string[],
  ) {
    this.key = variant === null ? null : variant.key;
    this.payload = variant === null ? null : variant.payload;
    this.version = version;
    this.targetingVersion = version;
    this.default = variant === null;
    this.ruleEvaluationResults = ruleEvaluationResults;
    this.missingContextFields = missingContextFields;
    this.#variant = variant;
  }

  /** The variant `config` was computed from, when it is one of ours; null for "no variant matched". */
  static variantOf(config: EvaluatedConfig): CompiledVariant | null | undefined {
    return typeof config === "object" && config !== null && #variant in config ? config.#variant : undefined;
  }
}

/** One evaluated feature, as evaluateRuleset returns it. */
export class EvaluatedFeatureResult implements EvaluatedFeature {
  key: string;
  isEnabled: boolean;
  targetingVersion: number;
  stage: string | null;
  ruleEvaluationResults: boolean[];
  missingContextFields: string[];
  config: EvaluatedConfig;
  readonly #source: CompiledFeature;

  constructor(
    source: CompiledFeature,
    isEnabled: boolean,
    ruleEvaluationResults: boolean[],
    missingContextFields: string[],
    config: EvaluatedConfig,
  ) {
    this.key = source.key;
    this.isEnabled = isEnabled;
    this.targetingVersion = source.targetingVersion;
    this.stage = source.stage;
    this.ruleEvaluationResults = ruleEvaluationResults;
    this.missingContextFields = missingContextFields;
    this.config = config;
    this.#source = source;
  }

  /** The compiled feature `item` was evaluated from, when it is one of ours. */
  static sourceOf(item: EvaluatedFeature): CompiledFeature | undefined {
    return typeof item === "object" && item !== null && #source in item ? item.#source : undefined;
  }
}

/** A feature's evaluation result from its rule and variant results (the first matching variant is served). */
export function evaluatedFeature(
  feature: CompiledFeature,
  isEnabled: boolean,
  ruleResults: boolean[],
  missing: string[],
  variantResults: boolean[],
  variantMissing: string[],
  optIn: OptInItem | undefined,
): EvaluatedFeature {
  const matched = variantResults.indexOf(true);
  const variant = matched === -1 ? null : (feature.variants[matched] ?? null);
  const config = new EvaluatedConfigResult(feature.configVersion, variant, variantResults, variantMissing);
  const result: EvaluatedFeature = new EvaluatedFeatureResult(feature, isEnabled, ruleResults, missing, config);
  if (optIn !== undefined) {
    // Extra fields take serializeEvaluation's generic path for this item; opt-in features are few.
    result.optInEnabled = true;
    result.optIn = optIn;
  }
  return result;
}

/** Own enumerable fields of an unmodified item and of its config; more means someone added fields. */
export const FEATURE_FIELD_COUNT = 7;
export const CONFIG_FIELD_COUNT = 7;
