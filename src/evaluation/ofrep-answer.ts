/**
 * Evaluated features as OpenFeature flags (OFREP, API.md §14): each feature is a boolean flag `<key>` (its access)
 * and, when it has config variants, a flag `<key>:config` (the matched variant's payload). Pure: no I/O.
 */
import type { CompiledFeature, CompiledRuleset } from "./compile-ruleset.js";
import { EvaluatedFeatureResult } from "./evaluated-feature.js";
import type { EvaluatedFeature, Filter } from "./types.js";
import { MAX_SERVED_FILTER_DEPTH } from "../schemas/rules.js";

export type OfrepReason = "STATIC" | "TARGETING_MATCH" | "SPLIT" | "DEFAULT" | "DISABLED";

/** One flag of an OFREP answer; `value` and `variant` are absent when the caller's default applies. */
export interface OfrepFlag {
  key: string;
  value?: unknown;
  reason: OfrepReason;
  variant?: string;
  metadata: { targetingVersion: number; flagStateVersion: number; configKey?: string };
}

export const CONFIG_SUFFIX = ":config";

/** What a rule list's reasons are read from, computed once per compiled feature. */
interface RuleFacts {
  /** The list is one constant filter. */
  isStatic: boolean;
  /** Per rule: its filter tree holds a `rolloutPercentage` filter. */
  splits: boolean[];
}

const targetingFacts = new WeakMap<CompiledFeature, RuleFacts>();
const variantFacts = new WeakMap<CompiledFeature, RuleFacts>();

/** Served trees are at most MAX_SERVED_FILTER_DEPTH deep; the bound only guards definitions never validated. */
const MAX_DEPTH = MAX_SERVED_FILTER_DEPTH;

function holdsRollout(filter: Filter | undefined, depth = 0): boolean {
  if (typeof filter !== "object" || filter === null || depth > MAX_DEPTH) return false;
  switch (filter.type) {
    case "rolloutPercentage":
      return true;
    case "group":
      return Array.isArray(filter.filters) && filter.filters.some((member) => holdsRollout(member, depth + 1));
    case "negation":
      return holdsRollout(filter.filter, depth + 1);
    default:
      return false;
  }
}

function factsOf(rules: readonly { filter: Filter }[] | undefined): RuleFacts {
  const list = Array.isArray(rules) ? rules : [];
  return {
    isStatic: list.length === 1 && list[0]?.filter?.type === "constant",
    splits: list.map((rule) => holdsRollout(rule?.filter)),
  };
}

function memo(cache: WeakMap<CompiledFeature, RuleFacts>, feature: CompiledFeature, rules: readonly { filter: Filter }[] | undefined): RuleFacts {
  let facts = cache.get(feature);
  if (facts === undefined) cache.set(feature, (facts = factsOf(rules)));
  return facts;
}

/** The reason of a matched rule (or variant) `index`, or DEFAULT when none matched. */
function reasonOf(facts: RuleFacts, index: number): OfrepReason {
  if (index === -1) return "DEFAULT";
  if (facts.isStatic) return "STATIC";
  return facts.splits[index] === true ? "SPLIT" : "TARGETING_MATCH";
}

function sourceOf(item: EvaluatedFeature): CompiledFeature {
  const source = EvaluatedFeatureResult.sourceOf(item);
  if (source === undefined) throw new Error("OFREP flags are made from evaluateRuleset's own results");
  return source;
}

/** Whether a feature is served as a `<key>:config` flag: it has config variants, and no feature owns that key. */
export function hasConfigFlag(feature: CompiledFeature): boolean {
  return feature.variants.length > 0 && !feature.ruleset.byKey.has(feature.key + CONFIG_SUFFIX);
}

/** The feature an OFREP flag key names, and which of its two flags; undefined for an unknown key. */
export function findOfrepFlag(ruleset: CompiledRuleset, flagKey: string): { feature: CompiledFeature; config: boolean } | undefined {
  const own = ruleset.byKey.get(flagKey);
  if (own !== undefined) return { feature: own, config: false };
  if (!flagKey.endsWith(CONFIG_SUFFIX)) return undefined;
  const base = ruleset.byKey.get(flagKey.slice(0, -CONFIG_SUFFIX.length));
  return base !== undefined && hasConfigFlag(base) ? { feature: base, config: true } : undefined;
}

/**
 * The access flag: `isEnabled` with variant `on`/`off`. A feature on only by an opt-in (no rule matched) is a
 * targeting match: the user's or company's opt-in targeted it.
 */
export function accessFlag(item: EvaluatedFeature, flagStateVersion: number): OfrepFlag {
  const feature = sourceOf(item);
  const matched = item.ruleEvaluationResults.indexOf(true);
  const facts = memo(targetingFacts, feature, feature.definition.targeting?.rules);
  // One constant filter is STATIC whatever its value (API.md §14), unless an opt-in turned the feature on; a feature
  // the kill switch holds off is DISABLED (OFREP's reason for a flag turned off in the management system).
  const reason =
    matched === -1 && item.isEnabled ? "TARGETING_MATCH" : feature.definition.switchedOff === true ? "DISABLED" : facts.isStatic ? "STATIC" : reasonOf(facts, matched);
  const metadata: OfrepFlag["metadata"] = { targetingVersion: item.targetingVersion, flagStateVersion };
  if (item.config.key !== null) metadata.configKey = item.config.key;
  return { key: item.key, value: item.isEnabled, reason, variant: item.isEnabled ? "on" : "off", metadata };
}

/** The config flag: the matched variant's payload and key, or no value (reason DEFAULT) when none matched. */
export function configFlag(item: EvaluatedFeature, flagStateVersion: number): OfrepFlag {
  const feature = sourceOf(item);
  const key = item.key + CONFIG_SUFFIX;
  const metadata = { targetingVersion: item.config.version, flagStateVersion };
  const matched = item.config.ruleEvaluationResults.indexOf(true);
  if (item.config.key === null || matched === -1) return { key, reason: "DEFAULT", metadata };
  const reason = reasonOf(memo(variantFacts, feature, feature.definition.config?.variants), matched);
  return { key, value: item.config.payload, reason, variant: item.config.key, metadata };
}

/**
 * One feature outcome's OFREP text, made once per remembered outcome (outcome-memo.ts): an answer is then assembled
 * from these bytes (ofrep-bulk.ts), not built and serialised as objects per request.
 */
export interface OfrepOutcome {
  /** The feature's flags in a bulk answer, as UTF-8: the access flag, and `,` and the config flag when it is served. */
  bulkBytes: Uint8Array;
  /** Two words of a digest of that text: an answer's ETag is mixed from these instead of digesting its whole text. */
  digestWords: readonly [number, number];
  access: string;
  /** The config flag alone, when the feature has one. */
  config: string | undefined;
  item: EvaluatedFeature;
}

const encoder = new TextEncoder();

/** The OFREP text of an evaluated feature; `digest` is a digest of a text (at least 8 bytes; the first 8 are used). */
export function ofrepOutcome(item: EvaluatedFeature, flagStateVersion: number, digest: (text: string) => Uint8Array): OfrepOutcome {
  const access = JSON.stringify(accessFlag(item, flagStateVersion));
  const config = hasConfigFlag(sourceOf(item)) ? JSON.stringify(configFlag(item, flagStateVersion)) : undefined;
  const bulk = config === undefined ? access : `${access},${config}`;
  const digested = digest(bulk);
  const words = new DataView(digested.buffer, digested.byteOffset, 8);
  return { bulkBytes: encoder.encode(bulk), digestWords: [words.getUint32(0), words.getUint32(4)], access, config, item };
}
