/**
 * Unleash 6 features as a `switchyard.flags/v1` document (API.md §13.3): a pure function of what Unleash's admin
 * API answered. The rule is "never serve more than Unleash would": a strategy, constraint or variant that has no
 * exact equivalent is left out (the feature serves fewer users) and a warning names it; where the result serves the
 * same share of other users (our rollout hash differs from Unleash's), a warning says that too.
 */
import type { DocumentFeature, FlagsDocument, ImportWarning as Warning } from "./flags-document.js";
import type { UnleashConstraint, UnleashFeature, UnleashSegment, UnleashStrategy, UnleashVariant } from "./unleash-schemas.js";

/** Unleash context field → ours (`user.…`, `company.…`, `other.…`), or null where rules cannot name it. */
export type ContextMapping = Record<string, string | null>;

export const DEFAULT_CONTEXT_MAPPING: Readonly<ContextMapping> = Object.freeze({
  userId: "user.id",
  companyId: "company.id",
  email: "user.email",
  sessionId: null,
  remoteAddress: null,
  appName: null,
  environment: null,
  currentTime: null,
});

type Filter = Record<string, unknown>;
const TRUE: Filter = { type: "constant", value: true };

/** What one constraint (or strategy part) means here. */
type Part = { kind: "filter"; filter: Filter } | { kind: "always" } | { kind: "never" } | { kind: "unmapped"; code: string; message: string };

const and = (filters: Filter[]): Filter => (filters.length === 0 ? TRUE : filters.length === 1 ? filters[0]! : { type: "group", operator: "and", filters });
const or = (filters: Filter[]): Filter => (filters.length === 1 ? filters[0]! : { type: "group", operator: "or", filters });
const not = (filter: Filter): Filter => ({ type: "negation", filter });
const context = (field: string, operator: string, values?: string[]): Filter => ({ type: "context", field, operator, ...(values ? { values } : {}) });

export interface UnleashInput {
  features: UnleashFeature[];
  segments: UnleashSegment[];
  /** Unleash environment → our environment name. */
  environments: Record<string, string>;
  contextMapping?: ContextMapping;
}

export function mapUnleash(input: UnleashInput): { document: FlagsDocument; warnings: Warning[] } {
  const mapping: ContextMapping = { ...DEFAULT_CONTEXT_MAPPING, ...(input.contextMapping ?? {}) };
  const field = (name: string): string | null => (Object.hasOwn(mapping, name) ? mapping[name]! : `company.${name}`);
  const segments = new Map(input.segments.map((segment) => [segment.id, segment]));
  const warnings: Warning[] = [];
  const features: DocumentFeature[] = [];
  const imported = new Set(input.features.map((feature) => feature.name));

  for (const feature of input.features) {
    const out: DocumentFeature = { key: feature.name, fields: { description: feature.description ?? null }, environments: {} };
    for (const [theirs, ours] of Object.entries(input.environments)) {
      const warn = (code: string, message: string, strategyId?: string) => warnings.push({ key: feature.name, environment: ours, ...(strategyId !== undefined ? { strategyId } : {}), code, message });
      const environment = feature.environments.find((candidate) => candidate.name === theirs);
      const dependencies = dependencyMapping(feature, imported);
      if (!dependencies.ok) {
        if (environment?.enabled) warn("UNMAPPED_DEPENDENCY", `${dependencies.reason}: imported serving nobody.`);
        out.environments[ours] = { rules: [], variants: [], prerequisites: [] };
        continue;
      }
      // Unleash's dependencies hold in every environment; ours are per environment, so each gets them (an empty list
      // too: a dependency removed in Unleash goes here on the next import).
      const prerequisites = { prerequisites: dependencies.prerequisites };
      if (!environment || !environment.enabled) {
        out.environments[ours] = { rules: [], variants: [], ...prerequisites };
        continue;
      }
      if (environment.strategies.length === 0) {
        out.environments[ours] = { rules: [{ filter: TRUE }], variants: [], ...prerequisites };
        continue;
      }
      const live = environment.strategies.filter((strategy) => strategy.disabled !== true).sort((a, b) => (a.sortOrder ?? 0) - (b.sortOrder ?? 0));
      if (live.length === 0) {
        // Unleash 6.4.1 drops disabled strategies and then serves everyone; importing that would widen the flag.
        warn("ALL_STRATEGIES_DISABLED", "Every strategy is disabled (Unleash then serves everyone); imported serving nobody.");
        out.environments[ours] = { rules: [], variants: [], ...prerequisites };
        continue;
      }
      const importedStrategies: { strategy: UnleashStrategy; filter: Filter }[] = [];
      for (const strategy of live) {
        const filter = strategyFilter(feature.name, strategy, segments, field, (code, message) => warn(code, message, strategy.id));
        if (filter) importedStrategies.push({ strategy, filter });
      }
      const variants: unknown[] = [];
      for (const { strategy, filter } of importedStrategies) {
        const groupId = typeof strategy.parameters?.groupId === "string" && strategy.parameters.groupId !== "" ? strategy.parameters.groupId : feature.name;
        variants.push(...variantList(strategy.variants ?? [], filter, groupId, field, (code, message) => warn(code, message, strategy.id)));
      }
      if (importedStrategies.length > 0) variants.push(...variantList(environment.variants ?? [], or(importedStrategies.map((item) => item.filter)), feature.name, field, warn));
      out.environments[ours] = { rules: importedStrategies.map(({ filter }) => ({ filter })), variants, ...prerequisites };
    }
    features.push(out);
  }
  return { document: { segments: [], stages: [], features }, warnings };
}

type Warn = (code: string, message: string) => void;

type DependencyMapping = { ok: true; prerequisites: { feature: string; enabled: boolean }[] } | { ok: false; reason: string };

/**
 * Unleash `dependencies` as prerequisites (API.md §15): a parent imported too, required on (`enabled`, Unleash's
 * default) or off. A dependency on some of the parent's variants has no equivalent here (a prerequisite is about
 * access, not which variant), nor has a parent left out of the import: then the feature is imported serving nobody.
 */
function dependencyMapping(feature: UnleashFeature, imported: ReadonlySet<string>): DependencyMapping {
  const prerequisites: { feature: string; enabled: boolean }[] = [];
  for (const dependency of feature.dependencies ?? []) {
    if ((dependency.variants ?? []).length > 0) {
      return { ok: false, reason: `Depends on variants ${dependency.variants!.join(", ")} of ${dependency.feature}, which prerequisites cannot express (they require a feature on or off, not a variant)` };
    }
    if (!imported.has(dependency.feature)) return { ok: false, reason: `Depends on ${dependency.feature}, which is not imported` };
    prerequisites.push({ feature: dependency.feature, enabled: dependency.enabled !== false });
  }
  return { ok: true, prerequisites };
}

/** One strategy as a filter, or undefined when it is left out (serves nobody, or has no exact equivalent: warned). */
function strategyFilter(featureKey: string, strategy: UnleashStrategy, segments: Map<number, UnleashSegment>, field: (name: string) => string | null, warn: Warn): Filter | undefined {
  const parts: Part[] = (strategy.constraints ?? []).map((constraint) => constraintPart(constraint, field));
  for (const id of strategy.segments ?? []) {
    const segment = segments.get(id);
    // A strategy naming a segment Unleash does not have matches nobody there.
    parts.push(segment ? combine(segment.constraints.map((constraint) => constraintPart(constraint, field))) : { kind: "never" });
  }
  parts.push(ownPart(featureKey, strategy, field, warn));
  const result = combine(parts);
  if (result.kind === "unmapped") {
    warn(result.code, `Strategy ${strategy.name} left out: ${result.message}`);
    return undefined;
  }
  if (result.kind === "never") return undefined;
  return result.kind === "always" ? TRUE : result.filter;
}

/** The AND of parts: unmapped wins (the strategy goes), then never; always-true parts drop out. */
function combine(parts: Part[]): Part {
  const unmapped = parts.find((part) => part.kind === "unmapped");
  if (unmapped) return unmapped;
  if (parts.some((part) => part.kind === "never")) return { kind: "never" };
  const filters = parts.flatMap((part) => (part.kind === "filter" ? [part.filter] : []));
  return filters.length === 0 ? { kind: "always" } : { kind: "filter", filter: and(filters) };
}

function unmappedField(name: string): Part {
  return { kind: "unmapped", code: "UNMAPPED_CONTEXT_FIELD", message: `the context field ${name} has no equivalent here (contextMapping maps it to null)` };
}

/** The strategy's own condition, besides its constraints and segments. */
function ownPart(featureKey: string, strategy: UnleashStrategy, field: (name: string) => string | null, warn: Warn): Part {
  const parameters = strategy.parameters ?? {};
  switch (strategy.name) {
    case "default":
      return { kind: "always" };
    case "userWithId": {
      const userIds = String(parameters.userIds ?? "").split(",").map((id) => id.trim()).filter((id) => id !== "");
      const target = field("userId");
      if (target === null) return unmappedField("userId");
      return userIds.length === 0 ? { kind: "never" } : { kind: "filter", filter: context(target, "ANY_OF", userIds) };
    }
    case "flexibleRollout":
    case "gradualRolloutUserId": {
      const percentage = Number(strategy.name === "flexibleRollout" ? parameters.rollout : parameters.percentage);
      const stickiness = strategy.name === "flexibleRollout" ? String(parameters.stickiness ?? "default") : "userId";
      if (!Number.isFinite(percentage) || percentage <= 0) return { kind: "never" };
      const groupId = typeof parameters.groupId === "string" && parameters.groupId !== "" ? parameters.groupId : featureKey;
      if (percentage >= 100) {
        if (stickiness === "default" || stickiness === "random") return { kind: "always" };
        const target = field(stickiness);
        return target === null ? unmappedField(stickiness) : { kind: "filter", filter: context(target, "SET") };
      }
      if (stickiness === "random") return { kind: "unmapped", code: "UNMAPPED_STRATEGY", message: "a random rollout below 100 % has no equivalent (rules are deterministic)" };
      const attribute = stickiness === "default" ? field("userId") : field(stickiness);
      if (attribute === null) return unmappedField(stickiness === "default" ? "userId" : stickiness);
      warn("ROLLOUT_REHASHED", `${percentage} % rollout kept: the same share of users, but other users (Switchyard's rollout hash differs from Unleash's).`);
      if (stickiness === "default") warn("STICKINESS_FALLBACK", `Stickiness default uses ${attribute} only; Unleash falls back to the session id, then a random value, when userId is absent.`);
      return { kind: "filter", filter: { type: "rolloutPercentage", key: groupId, partialRolloutAttribute: attribute, partialRolloutThreshold: Math.round(percentage * 1000) } };
    }
    default:
      return { kind: "unmapped", code: "UNMAPPED_STRATEGY", message: `the ${strategy.name} strategy has no equivalent here` };
  }
}

const NUM: (f: string) => Filter = (f) => ({ type: "group", operator: "or", filters: [context(f, "GT", ["-Infinity"]), context(f, "LT", ["Infinity"])] });

function constraintPart(constraint: UnleashConstraint, field: (name: string) => string | null): Part {
  const part = positivePart(constraint, field);
  if (!constraint.inverted) return part;
  switch (part.kind) {
    case "filter":
      return { kind: "filter", filter: not(part.filter) };
    case "always":
      return { kind: "never" };
    case "never":
      return { kind: "always" };
    default:
      return part;
  }
}

function positivePart(constraint: UnleashConstraint, field: (name: string) => string | null): Part {
  const operator = constraint.operator;
  const unmappedOperator = (why: string): Part => ({ kind: "unmapped", code: "UNMAPPED_OPERATOR", message: `${operator} on ${constraint.contextName}: ${why}` });
  if (operator === "STR_STARTS_WITH" || operator === "STR_ENDS_WITH") return unmappedOperator("rules have no prefix or suffix operator");
  if (operator === "DATE_AFTER" || operator === "DATE_BEFORE") return unmappedOperator("Unleash compares the current time, which rules cannot name");
  if (operator.startsWith("SEMVER_")) return unmappedOperator("rules have no version comparison");
  if (operator === "STR_CONTAINS" && !constraint.caseInsensitive) return unmappedOperator("rules compare case-insensitively only");
  if (!["IN", "NOT_IN", "STR_CONTAINS", "NUM_GT", "NUM_LT", "NUM_GTE", "NUM_LTE", "NUM_EQ"].includes(operator)) return unmappedOperator("unknown operator");
  const f = field(constraint.contextName);
  if (f === null) return unmappedField(constraint.contextName);
  // As Unleash uses them: empty values dropped, the rest trimmed.
  const values = (constraint.values ?? []).filter((value) => value !== "").map((value) => value.trim());
  switch (operator) {
    case "IN":
      return values.length === 0 ? { kind: "never" } : { kind: "filter", filter: context(f, "ANY_OF", values) };
    case "NOT_IN":
      // True when the field is absent, as in Unleash: ANY_OF is false on a missing field, its negation true.
      return values.length === 0 ? { kind: "always" } : { kind: "filter", filter: not(context(f, "ANY_OF", values)) };
    case "STR_CONTAINS":
      return values.length === 0 ? { kind: "never" } : { kind: "filter", filter: or(values.map((value) => context(f, "CONTAINS", [value]))) };
  }
  const raw = (constraint.value ?? "").trim();
  if (raw === "" || !Number.isFinite(Number(raw))) return { kind: "never" };
  switch (operator) {
    case "NUM_GT":
      return { kind: "filter", filter: context(f, "GT", [raw]) };
    case "NUM_LT":
      return { kind: "filter", filter: context(f, "LT", [raw]) };
    case "NUM_GTE":
      return { kind: "filter", filter: and([NUM(f), not(context(f, "LT", [raw]))]) };
    case "NUM_LTE":
      return { kind: "filter", filter: and([NUM(f), not(context(f, "GT", [raw]))]) };
    default:
      return { kind: "filter", filter: and([NUM(f), not(context(f, "GT", [raw])), not(context(f, "LT", [raw]))]) };
  }
}

function payloadOf(variant: UnleashVariant, warn: Warn): { payload?: unknown } {
  const payload = variant.payload;
  if (!payload) return {};
  if (payload.type === "json") {
    try {
      return { payload: JSON.parse(payload.value) as unknown };
    } catch {
      warn("VARIANT_PAYLOAD_TEXT", `Variant ${variant.name}: its json payload does not parse; imported as text.`);
      return { payload: payload.value };
    }
  }
  if (payload.type === "number") return { payload: Number(payload.value) };
  return { payload: payload.value };
}

/** Variants under `base` (the strategy's filter, or the or of the imported rules): overrides, then the weighted split. */
function variantList(variants: UnleashVariant[], base: Filter, groupId: string, field: (name: string) => string | null, warn: Warn): unknown[] {
  if (variants.length === 0) return [];
  const out: unknown[] = [];
  for (const variant of variants) {
    for (const override of variant.overrides ?? []) {
      const f = field(override.contextName);
      const values = override.values.filter((value) => value !== "").map((value) => value.trim());
      if (f === null) warn("UNMAPPED_CONTEXT_FIELD", `Variant ${variant.name}: override on ${override.contextName} left out (no equivalent field).`);
      else if (values.length > 0) out.push({ filter: and([base, context(f, "ANY_OF", values)]), key: variant.name, ...payloadOf(variant, warn) });
    }
  }
  if (variants.length === 1) {
    out.push({ filter: base, key: variants[0]!.name, ...payloadOf(variants[0]!, warn) });
    return out;
  }
  const stickiness = variants[0]!.stickiness ?? "default";
  const attribute = stickiness === "default" ? field("userId") : field(stickiness);
  if (attribute === null || stickiness === "random") {
    warn("UNMAPPED_CONTEXT_FIELD", `Variants split by ${stickiness}: no equivalent field; the split was left out.`);
    return out;
  }
  let cumulative = 0;
  variants.forEach((variant, index) => {
    cumulative += variant.weight;
    // Unleash weighs out of 1000; the last variant takes whatever is left, as Unleash's does.
    const threshold = index === variants.length - 1 ? 100_000 : Math.min(100_000, Math.round((cumulative / 1000) * 100_000));
    const split = { type: "rolloutPercentage", key: `${groupId}.variant`, partialRolloutAttribute: attribute, partialRolloutThreshold: threshold };
    out.push({ filter: and([base, split]), key: variant.name, ...payloadOf(variant, warn) });
  });
  warn("VARIANTS_REHASHED", "Variant weights kept: the same shares, but other users get each variant (the hash differs from Unleash's).");
  return out;
}
