/**
 * Compiles an environment's feature definitions once per version: each feature's targeting rules and config variants
 * into closures, plus the constant JSON fragments its evaluated item is serialised with. Compilation never throws: a
 * feature whose targeting cannot compile is never enabled, one whose config cannot compile never matches a variant.
 */
import { type Filter, MAX_SERVED_FILTER_DEPTH, validateFilterTree } from "../schemas/rules.js";
import type { ValidationIssue } from "../errors/catalogue.js";
import { ItemCache } from "./item-cache.js";
import { compileFilter, createScope, type FilterFn } from "./compile-filter.js";
import type { EvaluationScope } from "./evaluation-scope.js";
import { FieldRegistry } from "./field-registry.js";
import { RolloutCaches } from "./rollout-hash.js";
import { type FieldTrie, fieldTrie } from "./flatten-context.js";
import type { FeatureDefinition } from "./types.js";

/** A compiled rule list (targeting rules or config variants). */
export interface CompiledRules {
  readonly runs: readonly FilterFn[];
  /** Every rule's result when all of them are constant (nothing to evaluate), else undefined. */
  readonly constantResults: readonly boolean[] | undefined;
}

export interface CompiledVariant {
  readonly key: string;
  readonly payload: unknown;
  /** `{"key":…,"payload":…,"version":…,"targetingVersion":…,"default":false,"ruleEvaluationResults":` */
  readonly configHead: string;
}

/** One feature of a compiled ruleset: its compiled rule lists and its constant JSON fragments. */
export interface CompiledFeature {
  readonly ruleset: CompiledRuleset;
  readonly key: string;
  readonly stage: string | null;
  readonly targetingVersion: number;
  readonly configVersion: number;
  readonly targeting: CompiledRules;
  readonly variantRules: CompiledRules;
  readonly variants: readonly CompiledVariant[];
  /** Set when the feature allows opt-in. */
  readonly optIn: { readonly name: string; readonly description: string | null } | undefined;
  /** How many targeting rules and config variants are evaluated (a list that could not compile counts as all false). */
  readonly targetingRuleCount: number;
  readonly variantRuleCount: number;
  /** 2 ** targetingRuleCount and 2 ** variantRuleCount: the radixes of an outcome number (see answer-writer.ts). */
  readonly targetingRadix: number;
  readonly variantRadix: number;
  /** The results of a list whose rules are all constant, as bits (rule i is bit i); 0 otherwise. */
  readonly constantTargetingBits: number;
  readonly constantVariantBits: number;
  /** The targeting rules, config variants and kill switch as defined: what OpenFeature's reasons are read from (ofrep-answer.ts). */
  readonly definition: Pick<FeatureDefinition, "targeting" | "config" | "switchedOff">;
  /** This feature's item bytes by outcome (see answer-writer.ts). */
  readonly items: ItemCache;
  /** `"<key>":{"key":"<key>","isEnabled":` */
  readonly itemHead: string;
  /** `,"targetingVersion":…,"stage":…,"ruleEvaluationResults":` */
  readonly afterIsEnabled: string;
  /** The config head when no variant matched (`"key":null,"payload":null,…,"default":true`). */
  readonly defaultConfigHead: string;
  /**
   * JSON.stringify puts array-index keys ("0", "42") before all others, whatever the insertion order; a map holding
   * one cannot be written in result order.
   */
  readonly isArrayIndexKey: boolean;
  /** Scratch for serializeEvaluation's duplicate check. */
  lastSerialization: number;
}

/** The compiled form of one version of an environment's features. Treat as opaque outside src/evaluation. */
export class CompiledRuleset {
  readonly features: CompiledFeature[] = [];
  readonly byKey = new Map<string, CompiledFeature>();
  /** Rollout hashing dominates evaluation cost, and a ruleset sees the same users again and again. */
  readonly rolloutCaches = new RolloutCaches();
  /** Every context field a compiled rule reads, by id; evaluation resolves only these (see resolveFields). */
  readonly fields = new FieldRegistry();
  /** `fields` as resolveFields walks them; set once compilation is done. */
  fieldTrie: FieldTrie = fieldTrie([]);
  /** JSON strings of the field names serializeEvaluation has written as missing. */
  readonly fieldJson = new Map<string, string>();
  /** The features in the order a JSON object of them lists its keys: array-index keys first, ascending. */
  answerOrder: readonly CompiledFeature[] = [];
  /** The encoded answer heads of the last flagStateVersion answered (see answer-writer.ts). */
  readonly answerHeads = { version: -1, used: new Uint8Array(), unused: new Uint8Array() };
  /** Reused by every evaluation of this ruleset (evaluation is synchronous); sized once compilation is done. */
  scope: EvaluationScope = createScope([], new FieldRegistry(), new RolloutCaches());
  /** Keys of the features whose targeting or config could not be compiled, with why. */
  readonly compileFailures: { key: string; part: "targeting" | "config"; issues: ValidationIssue[] }[] = [];
}

/** Compiles feature definitions; a later definition of the same key replaces an earlier one in its position. */
export function compileRuleset(definitions: readonly FeatureDefinition[]): CompiledRuleset {
  const ruleset = new CompiledRuleset();
  if (!Array.isArray(definitions)) return ruleset;
  for (const definition of definitions) {
    const feature = compileFeatureSafely(ruleset, definition);
    if (feature === undefined) continue;
    const earlier = ruleset.byKey.get(feature.key);
    if (earlier === undefined) ruleset.features.push(feature);
    else ruleset.features[ruleset.features.indexOf(earlier)] = feature;
    ruleset.byKey.set(feature.key, feature);
  }
  ruleset.rolloutCaches.sizeGenerations();
  ruleset.fieldTrie = fieldTrie(ruleset.fields.names);
  ruleset.scope = createScope([], ruleset.fields, ruleset.rolloutCaches);
  ruleset.answerOrder = [
    ...ruleset.features.filter((feature) => feature.isArrayIndexKey).sort((a, b) => Number(a.key) - Number(b.key)),
    ...ruleset.features.filter((feature) => !feature.isArrayIndexKey),
  ];
  return ruleset;
}

function compileFeatureSafely(ruleset: CompiledRuleset, definition: FeatureDefinition): CompiledFeature | undefined {
  try {
    if (typeof definition?.key !== "string") return undefined;
    return compileFeature(ruleset, definition);
  } catch {
    // Only a definition whose own fields are unusable gets here (rule trees are compiled under their own guard).
    return undefined;
  }
}

function compileFeature(ruleset: CompiledRuleset, definition: FeatureDefinition): CompiledFeature {
  const key = definition.key;
  // Normalised so that every item has the fields the SDKs require, with JSON-representable values.
  const stage = typeof definition.stage === "string" ? definition.stage : null;
  const targetingVersion = finiteOrZero(definition.targeting?.version);
  const configVersion = finiteOrZero(definition.config?.version);

  const targetingRules = definition.targeting?.rules;
  let targeting = compileRules(targetingRules, "rules", ruleset.rolloutCaches, ruleset.fields);
  if (!targeting.ok) {
    ruleset.compileFailures.push({ key, part: "targeting", issues: targeting.issues });
    targeting = { ok: true, rules: neverEnabled(Array.isArray(targetingRules) ? targetingRules.length : 0) };
  }

  const variantDefinitions = definition.config?.variants;
  let variantRules = compileRules(variantDefinitions, "variants", ruleset.rolloutCaches, ruleset.fields);
  let variants: CompiledVariant[] = [];
  if (variantRules.ok) {
    try {
      variants = (variantDefinitions ?? []).map((variant) => compileVariant(variant, configVersion));
    } catch (error) {
      // A payload JSON cannot represent (a BigInt, a cycle).
      variantRules = { ok: false, issues: [{ path: "variants", message: String(error) }] };
    }
  }
  if (!variantRules.ok) {
    ruleset.compileFailures.push({ key, part: "config", issues: variantRules.issues });
    variantRules = { ok: true, rules: neverEnabled(Array.isArray(variantDefinitions) ? variantDefinitions.length : 0) };
    variants = [];
  }

  const keyJson = JSON.stringify(key);
  const versionsJson = `"version":${configVersion},"targetingVersion":${configVersion}`;
  return {
    ruleset,
    key,
    stage,
    targetingVersion,
    configVersion,
    targeting: targeting.rules,
    variantRules: variantRules.rules,
    variants,
    definition: { targeting: definition.targeting, config: definition.config, switchedOff: definition.switchedOff === true },
    optIn: definition.optIn
      ? { name: typeof definition.optIn.name === "string" ? definition.optIn.name : key, description: typeof definition.optIn.description === "string" ? definition.optIn.description : null }
      : undefined,
    targetingRuleCount: ruleCount(targeting.rules),
    variantRuleCount: ruleCount(variantRules.rules),
    targetingRadix: 2 ** ruleCount(targeting.rules),
    variantRadix: 2 ** ruleCount(variantRules.rules),
    constantTargetingBits: constantBits(targeting.rules),
    constantVariantBits: constantBits(variantRules.rules),
    items: new ItemCache(),
    itemHead: `${keyJson}:{"key":${keyJson},"isEnabled":`,
    afterIsEnabled: `,"targetingVersion":${targetingVersion},"stage":${JSON.stringify(stage)},"ruleEvaluationResults":`,
    defaultConfigHead: `{"key":null,"payload":null,${versionsJson},"default":true,"ruleEvaluationResults":`,
    isArrayIndexKey: ARRAY_INDEX.test(key) && Number(key) < 2 ** 32 - 1,
    lastSerialization: 0,
  };
}

const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;

function ruleCount(rules: CompiledRules): number {
  return rules.constantResults?.length ?? rules.runs.length;
}

function constantBits(rules: CompiledRules): number {
  let bits = 0;
  // Only read for lists the answer writer handles (at most 24 rules).
  rules.constantResults?.forEach((result, index) => {
    if (result && index < 31) bits |= 1 << index;
  });
  return bits;
}

function compileVariant(variant: { key: string; payload: unknown }, configVersion: number): CompiledVariant {
  let payloadJson = JSON.stringify(variant.payload);
  let payload = variant.payload;
  if (payloadJson === undefined) {
    // undefined (no payload) or a value JSON leaves out: the item says null, so it has the same field either way.
    payload = null;
    payloadJson = "null";
  }
  return {
    key: variant.key,
    payload,
    configHead:
      `{"key":${JSON.stringify(variant.key)},"payload":${payloadJson},"version":${configVersion},` +
      `"targetingVersion":${configVersion},"default":false,"ruleEvaluationResults":`,
  };
}

type RulesCompilation = { ok: true; rules: CompiledRules } | { ok: false; issues: ValidationIssue[] };

function compileRules(
  list: readonly { filter: Filter }[] | undefined,
  path: string,
  caches: RolloutCaches,
  fields: FieldRegistry,
): RulesCompilation {
  if (list === undefined) return { ok: true, rules: neverEnabled(0) };
  if (!Array.isArray(list)) return { ok: false, issues: [{ path, message: "must be an array" }] };
  try {
    const issues: ValidationIssue[] = [];
    // Served rules may nest deeper than saved ones: prerequisites are compiled into them.
    list.forEach((rule, index) => validateFilterTree(rule?.filter, `${path}.${index}.filter`, issues, { maxDepth: MAX_SERVED_FILTER_DEPTH }));
    if (issues.length > 0) return { ok: false, issues };
    const compiled = list.map((rule) => compileFilter(rule.filter, caches, fields));
    const allConstant = compiled.every((filter) => filter.constant !== undefined);
    return {
      ok: true,
      rules: {
        runs: compiled.map((filter) => filter.run),
        constantResults: allConstant ? compiled.map((filter) => filter.constant === true) : undefined,
      },
    };
  } catch (error) {
    return { ok: false, issues: [{ path, message: String(error) }] };
  }
}

/** `count` rules that are all false: how a rule list that cannot compile evaluates. */
function neverEnabled(count: number): CompiledRules {
  return { runs: [], constantResults: new Array<boolean>(count).fill(false) };
}

function finiteOrZero(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
