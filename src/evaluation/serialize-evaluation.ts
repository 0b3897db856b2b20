/** Writes the `features` map of `/features/evaluated` from evaluation results, reusing per-ruleset JSON fragments. */
import {
  CONFIG_FIELD_COUNT,
  EvaluatedConfigResult,
  EvaluatedFeatureResult,
  FEATURE_FIELD_COUNT,
} from "./evaluated-feature.js";
import type { CompiledFeature, CompiledRuleset } from "./compile-ruleset.js";
import type { EvaluatedConfig, EvaluatedFeature } from "./types.js";

let serializationCount = 0;

/**
 * The JSON text of `{<key>: item}` for `results`, equal to
 * `JSON.stringify(Object.fromEntries(results.map((item) => [item.key, item])))`.
 *
 * Items straight from evaluateRuleset are written from fragments compiled with the ruleset (key, versions, stage, the
 * matched variant's key and payload); only the booleans and arrays are stringified per call. Anything else — an item
 * changed or extended after evaluation, a key JSON orders specially, a key twice — takes the generic path, so the
 * output is always the generic one.
 */
export function serializeEvaluation(results: readonly EvaluatedFeature[]): string {
  const serialization = ++serializationCount;
  let ruleset: CompiledRuleset | undefined;
  let json = "{";
  for (let index = 0; index < results.length; index++) {
    const item = results[index] as EvaluatedFeature;
    const source = EvaluatedFeatureResult.sourceOf(item);
    if (
      source === undefined ||
      item.key !== source.key ||
      source.isArrayIndexKey ||
      source.lastSerialization === serialization || // the same feature twice
      (ruleset !== undefined && source.ruleset !== ruleset) // keys are unique only within one ruleset
    ) {
      return serializeGeneric(results);
    }
    ruleset = source.ruleset;
    source.lastSerialization = serialization;
    if (index > 0) json += ",";
    json += isPristineItem(item, source)
      ? source.itemHead +
        (item.isEnabled ? "true" : "false") +
        source.afterIsEnabled +
        booleansJson(item.ruleEvaluationResults) +
        ',"missingContextFields":' +
        fieldsJson(item.missingContextFields, source.ruleset) +
        ',"config":' +
        serializeConfig(item.config, source) +
        "}"
      : `${JSON.stringify(item.key)}:${JSON.stringify(item)}`;
  }
  return `${json}}`;
}

function serializeGeneric(results: readonly EvaluatedFeature[]): string {
  return JSON.stringify(Object.fromEntries(results.map((item) => [item.key, item])));
}

/** Whether the item's own fields are still the ones the fragments were made from (the arrays are written anyway). */
function isPristineItem(item: EvaluatedFeature, source: CompiledFeature): boolean {
  return (
    typeof item.isEnabled === "boolean" &&
    Array.isArray(item.ruleEvaluationResults) &&
    Array.isArray(item.missingContextFields) &&
    item.targetingVersion === source.targetingVersion &&
    item.stage === source.stage &&
    Object.keys(item).length === FEATURE_FIELD_COUNT
  );
}

function serializeConfig(config: EvaluatedConfig, source: CompiledFeature): string {
  const variant = EvaluatedConfigResult.variantOf(config);
  const pristine =
    variant !== undefined &&
    Array.isArray(config.ruleEvaluationResults) &&
    Array.isArray(config.missingContextFields) &&
    config.version === source.configVersion &&
    config.targetingVersion === source.configVersion &&
    config.default === (variant === null) &&
    config.key === (variant === null ? null : variant.key) &&
    config.payload === (variant === null ? null : variant.payload) &&
    Object.keys(config).length === CONFIG_FIELD_COUNT;
  if (!pristine) return JSON.stringify(config);
  return (
    (variant === null ? source.defaultConfigHead : variant.configHead) +
    booleansJson(config.ruleEvaluationResults) +
    ',"missingContextFields":' +
    fieldsJson(config.missingContextFields, source.ruleset) +
    "}"
  );
}

// JSON.stringify has a fixed cost per call even for `[]` (docs/BENCHMARKS.md, "Figures behind the code"); these two write the usual arrays directly and hand anything
// unexpected (a hole, a non-boolean, a non-string) to JSON.stringify, so the text is the same either way.

function booleansJson(values: readonly boolean[]): string {
  let json = "[";
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (value === true) json += index === 0 ? "true" : ",true";
    else if (value === false) json += index === 0 ? "false" : ",false";
    else return JSON.stringify(values);
  }
  return `${json}]`;
}

/** Missing fields are rule field names, a small set per ruleset, so their JSON forms are remembered there. */
function fieldsJson(fields: readonly string[], ruleset: CompiledRuleset): string {
  if (fields.length === 0) return "[]";
  let json = "[";
  for (let index = 0; index < fields.length; index++) {
    const field = fields[index];
    if (typeof field !== "string") return JSON.stringify(fields);
    let fieldJson = ruleset.fieldJson.get(field);
    if (fieldJson === undefined) {
      fieldJson = JSON.stringify(field);
      // Bounded in case a caller puts arbitrary strings into the arrays.
      if (ruleset.fieldJson.size < MAX_REMEMBERED_FIELDS) ruleset.fieldJson.set(field, fieldJson);
    }
    json += index === 0 ? fieldJson : `,${fieldJson}`;
  }
  return `${json}]`;
}

const MAX_REMEMBERED_FIELDS = 10_000;
