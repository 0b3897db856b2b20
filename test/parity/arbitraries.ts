/**
 * fast-check generators of rule trees, feature definitions and contexts for the parity suite. Rule operands and
 * context values are drawn from one pool of awkward strings so that rules actually match, and miss, often.
 */
import { hashInt } from "@bucketco/flag-evaluation";
import fc from "fast-check";

import type { FeatureDefinition, Filter } from "../../src/evaluation/index.js";
import { CONTEXT_OPERATORS, OPERATORS_WITHOUT_VALUES, type ContextOperator } from "../../src/schemas/rules.js";

/** The frozen "now" of the parity suite; dates are generated around it so AFTER / BEFORE land on both sides. */
export const PARITY_NOW = Date.UTC(2025, 2, 30, 1, 30, 0, 0); // a DST change in Europe, to make local days uneven

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** Field names: nested paths, array items, odd characters, and names of Object.prototype members. */
const FIELDS = [
  "user.id",
  "user.name",
  "user.email",
  "user.tags.0",
  "user.tags.1",
  "user.tags",
  "company.id",
  "company.plan",
  "company.seats",
  "company.createdAt",
  "company",
  "other.flag",
  "other.nested.deep",
  "plan",
  "Plan",
  "a.b",
  "0",
  "ключ.ünï",
  "toString",
  "constructor",
  "__proto__",
  "hasOwnProperty",
] as const;

/** Object.prototype members: the reference throws on CONTAINS there (see operators.ts), so those pairs are avoided. */
const INHERITED_FIELDS = new Set<string>(["toString", "constructor", "__proto__", "hasOwnProperty"]);

const KEYS = ["user", "company", "other", "id", "name", "email", "tags", "plan", "Plan", "seats", "createdAt", "flag",
  "nested", "deep", "a", "b", "a.b", "0", "1", "ключ", "ünï", "toString", "__proto__", "hasOwnProperty", ""] as const;

function isoAround(days: number, ms: number): string {
  return new Date(PARITY_NOW + days * DAY_MS + ms).toISOString();
}

const STRINGS = [
  "", " ", "1", "10", "2", "-3.5", "1e3", "0x10", " 42 ", "007", "NaN", "Infinity", "-0", "abc", "ABC", "Abc", "aBc d",
  "true", "false", "True", "FALSE", "null", "undefined", "pro", "Pro", "enterprise", "ü", "Ü", "İ", "i̇", "ß", "SS",
  "😀", "\uD800", "a\uDC00b", "user-1", "acme", "huddle", "a.b", "[object Object]",
  "2020-01-01", "2099-12-31T00:00:00Z", "not a date", "2025-03-30", "2025-03-29T23:59:59.999Z",
  isoAround(0, 0), isoAround(-1, 0), isoAround(-1, 1), isoAround(-1, -1), isoAround(-7, 0), isoAround(-30, 5),
  isoAround(1, 0), isoAround(-365, 0), isoAround(-10_000, 0), isoAround(3650, 0),
] as const;

/** Operands of AFTER / BEFORE are day counts. */
const DAY_COUNTS = ["0", "1", "7", "30", "365", "-1", "1.5", "-0.5", "abc", "", "1e9", "Infinity"] as const;

export const stringAtom = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...STRINGS) },
  { weight: 2, arbitrary: fc.constantFrom(...DAY_COUNTS) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.integer({ min: -10_000, max: 10_000 }).map(String) },
  // Whole days ± a few ms, and part days: "1.5 days ago" is not 36 hours ago in the reference (setDate truncates).
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: -400, max: 400 }), fc.integer({ min: -2, max: 2 }))
      .map(([days, ms]) => isoAround(days, ms)) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: -40, max: 10 }), fc.integer({ min: -30, max: 30 }))
      .map(([days, hours]) => isoAround(days, hours * HOUR_MS)) },
);

function operandsFor(operator: ContextOperator): fc.Arbitrary<string[]> {
  const atom = operator === "AFTER" || operator === "BEFORE"
    ? fc.oneof(fc.constantFrom(...DAY_COUNTS), stringAtom)
    : stringAtom;
  return fc.array(atom, { minLength: 1, maxLength: 4 });
}

const contextFilter: fc.Arbitrary<Filter> = fc
  .tuple(fc.constantFrom(...CONTEXT_OPERATORS), fc.constantFrom(...FIELDS))
  .filter(([operator, field]) => !(INHERITED_FIELDS.has(field) && operator.includes("CONTAINS")))
  .chain(([operator, field]) => {
    if (!OPERATORS_WITHOUT_VALUES.has(operator)) {
      return operandsFor(operator).map((values): Filter => ({ type: "context", field, operator, values }));
    }
    // Operators without operands may still carry a (possibly empty) list, or none at all.
    return fc.option(fc.array(stringAtom, { maxLength: 2 }), { nil: undefined }).map((values): Filter =>
      values === undefined ? { type: "context", field, operator } : { type: "context", field, operator, values });
  });

const ROLLOUT_KEYS = ["flag-a", "huddle", "Flag.With.Dots", "ünï"] as const;

/** Thresholds equal to the bucket of a likely (key, value) pair, so that `<` versus `<=` is observable. */
const BOUNDARY_THRESHOLDS = ROLLOUT_KEYS.flatMap((key) =>
  ["1", "abc", "acme", "user-1", "true", "", "😀"].map((value) => hashInt(`${key}.${value}`)));

const rolloutFilter: fc.Arbitrary<Filter> = fc.record({
  type: fc.constant("rolloutPercentage" as const),
  key: fc.constantFrom(...ROLLOUT_KEYS),
  partialRolloutAttribute: fc.constantFrom(...FIELDS),
  partialRolloutThreshold: fc.oneof(
    fc.constantFrom(0, 1, 50_000, 99_999, 100_000),
    fc.constantFrom(...BOUNDARY_THRESHOLDS),
    fc.integer({ min: 0, max: 100_000 }),
  ),
});

const constantFilter: fc.Arbitrary<Filter> = fc.boolean().map((value): Filter => ({ type: "constant", value }));

/** Rule trees over every filter type, nested up to `maxDepth` levels of groups and negations. */
/** Text a client can send in a URL or a JSON body: no lone surrogate (encodeURIComponent throws; the SDKs cannot send one). */
export const sentText = stringAtom.filter((text) => text.isWellFormed());

/** An attribute value as clients send it in a context: mostly text, some numbers, booleans, nulls and short lists. */
export const sentAttributeValue = fc.oneof(
  { weight: 6, arbitrary: sentText },
  { weight: 2, arbitrary: fc.integer({ min: -1000, max: 1000 }) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(sentText, { maxLength: 3 }) },
);

export function filterTree(maxDepth = 5): fc.Arbitrary<Filter> {
  const depthIdentifier = fc.createDepthIdentifier();
  return fc.letrec<{ filter: Filter; group: Filter; negation: Filter }>((tie) => ({
    filter: fc.oneof(
      { maxDepth, depthIdentifier, depthSize: "small", withCrossShrink: true },
      { weight: 5, arbitrary: contextFilter },
      { weight: 2, arbitrary: rolloutFilter },
      { weight: 1, arbitrary: constantFilter },
      { weight: 3, arbitrary: tie("group") },
      { weight: 1, arbitrary: tie("negation") },
    ),
    group: fc.record({
      type: fc.constant("group" as const),
      operator: fc.constantFrom("and" as const, "or" as const),
      filters: fc.array(tie("filter"), { maxLength: 4, depthIdentifier }),
    }),
    negation: fc.record({ type: fc.constant("negation" as const), filter: tie("filter") }),
  })).filter;
}

const payload = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 2 }),
);

/** One to four features with distinct keys, each with up to four rules and three variants. */
export function featureDefinitions(): fc.Arbitrary<FeatureDefinition[]> {
  const tree = filterTree();
  const feature = fc.record({
    key: fc.constantFrom("huddle", "export", "new-ui", "42", "ünï", "a.b"),
    // Names of the default release stages: a stage the app does not have is refused (API.md §6).
    stage: fc.constantFrom(null, "Beta", "General availability"),
    targeting: fc.record({
      version: fc.integer({ min: 0, max: 50 }),
      rules: fc.array(fc.record({ filter: tree }), { maxLength: 4 }),
    }),
    config: fc.record({
      version: fc.integer({ min: 0, max: 50 }),
      variants: fc.array(
        fc.record({ filter: tree, key: fc.constantFrom("blue", "green", "x"), payload }),
        { maxLength: 3 },
      ),
    }),
  });
  return fc.uniqueArray(feature, { minLength: 1, maxLength: 4, selector: (definition) => definition.key });
}

/** Context values as JSON and SDKs produce them: strings, numbers, booleans, null, arrays, nested objects. */
export function contextValue(maxDepth = 3): fc.Arbitrary<unknown> {
  const depthIdentifier = fc.createDepthIdentifier();
  return fc.letrec<{ value: unknown; object: unknown }>((tie) => ({
    value: fc.oneof(
      { maxDepth, depthIdentifier, depthSize: "small" },
      { weight: 6, arbitrary: stringAtom },
      { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -0, 1e21, 0.1 + 0.2)) },
      { weight: 1, arbitrary: fc.boolean() },
      { weight: 1, arbitrary: fc.constantFrom(null, undefined) },
      { weight: 1, arbitrary: fc.array(tie("value"), { maxLength: 3, depthIdentifier }) },
      { weight: 2, arbitrary: tie("object") },
    ),
    // Object.fromEntries defines keys like "__proto__" as own properties, as JSON.parse does.
    object: fc
      .array(fc.tuple(fc.constantFrom(...KEYS), tie("value")), { maxLength: 4, depthIdentifier })
      .map((entries) => Object.fromEntries(entries)),
  })).value;
}

/** A context shaped like the SDKs': user, company, other, plus stray top-level keys. */
export function evaluationContext(): fc.Arbitrary<Record<string, unknown>> {
  const value = contextValue();
  return fc
    .tuple(
      fc.option(value, { nil: undefined, freq: 3 }),
      fc.option(value, { nil: undefined, freq: 3 }),
      fc.option(value, { nil: undefined, freq: 3 }),
      fc.array(fc.tuple(fc.constantFrom(...KEYS), value), { maxLength: 3 }),
    )
    .map(([user, company, other, stray]) => {
      const entries: [string, unknown][] = [...stray];
      if (user !== undefined) entries.push(["user", user]);
      if (company !== undefined) entries.push(["company", company]);
      if (other !== undefined) entries.push(["other", other]);
      return Object.fromEntries(entries);
    });
}

/** A feature's prerequisites and kill switch in the environment a parity test evaluates (API.md §15). */
export interface ReleaseSettings {
  prerequisites: { feature: string; enabled: boolean }[];
  switchedOn: boolean;
}

/**
 * Release settings for features listed in this order: each feature may require (or require off) features listed
 * before it, so the graph never has a cycle and chains run as deep as the list; a few features are switched off.
 */
export function releaseSettings(keys: readonly string[]): fc.Arbitrary<ReleaseSettings[]> {
  return fc.tuple(
    ...keys.map((_, index) =>
      fc.record({
        prerequisites: fc.oneof(
          { weight: 1, arbitrary: fc.constant([]) },
          { weight: 2, arbitrary: fc.subarray(keys.slice(0, index)).chain((parents) => fc.tuple(...parents.map((feature) => fc.boolean().map((enabled) => ({ feature, enabled }))))) },
        ),
        switchedOn: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      }),
    ),
  );
}

/** Feature definitions with release settings for each, in definition order. */
export function featuresWithPrerequisites(): fc.Arbitrary<{ definitions: FeatureDefinition[]; settings: ReleaseSettings[] }> {
  return featureDefinitions().chain((definitions) => releaseSettings(definitions.map((definition) => definition.key)).map((settings) => ({ definitions, settings })));
}
