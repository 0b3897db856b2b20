/**
 * Validation of rule trees (feature targeting and remote-config variants), run when the management API saves them.
 *
 * The filter tree is recursive and user-controlled, so it is walked iteratively with an explicit stack: each node is
 * checked by a flat valibot schema whose children are `unknown`, and the walker descends itself. That bounds the work
 * by the depth limit instead of the call stack, so 10,000 levels of nesting give an issue, not a RangeError.
 * Validation never transforms: on success the very input object is returned, because rules are stored and returned
 * exactly as saved.
 */
import * as v from "valibot";

import type { ValidationIssue } from "../errors/catalogue.js";

/** Context operators, as understood by the reference evaluator `@bucketco/flag-evaluation`. */
export const CONTEXT_OPERATORS = [
  "IS",
  "IS_NOT",
  "ANY_OF",
  "NOT_ANY_OF",
  "CONTAINS",
  "NOT_CONTAINS",
  "GT",
  "LT",
  "AFTER",
  "BEFORE",
  "DATE_AFTER",
  "DATE_BEFORE",
  "SET",
  "NOT_SET",
  "IS_TRUE",
  "IS_FALSE",
] as const;

export type ContextOperator = (typeof CONTEXT_OPERATORS)[number];

/** Operators the reference evaluates without reading `values[0]`; every other one needs at least one value. */
export const OPERATORS_WITHOUT_VALUES: ReadonlySet<ContextOperator> = new Set([
  "SET",
  "NOT_SET",
  "IS_TRUE",
  "IS_FALSE",
]);

export const FILTER_TYPES = ["constant", "context", "rolloutPercentage", "group", "negation"] as const;

/** The rule's own filter is level 1; each group member or negated filter is one level deeper. */
export const MAX_FILTER_DEPTH = 32;

/**
 * How deep a served rule tree may be: a saved rule (at most MAX_FILTER_DEPTH) with its chain of prerequisites
 * compiled in, each level nesting the parent's tree a few groups deeper (src/features/served-rules.ts).
 */
export const MAX_SERVED_FILTER_DEPTH = 128;

/** 100000 means everyone: thresholds are in thousandths of a percent. */
export const MAX_ROLLOUT_THRESHOLD = 100_000;

/** A huge invalid tree would otherwise produce an answer as large as itself; the first issues are enough to act on. */
export const MAX_REPORTED_ISSUES = 100;

export interface ConstantFilter {
  type: "constant";
  value: boolean;
}

export interface ContextFilter {
  type: "context";
  field: string;
  operator: ContextOperator;
  values?: string[];
}

export interface RolloutPercentageFilter {
  type: "rolloutPercentage";
  key: string;
  partialRolloutAttribute: string;
  partialRolloutThreshold: number;
}

export interface GroupFilter {
  type: "group";
  operator: "and" | "or";
  filters: Filter[];
}

export interface NegationFilter {
  type: "negation";
  filter: Filter;
}

/** One node of a rule tree. */
export type Filter = ConstantFilter | ContextFilter | RolloutPercentageFilter | GroupFilter | NegationFilter;

/** A feature's targeting rules as saved (the version is assigned by the store, not sent). */
export interface TargetingRules {
  rules: { filter: Filter }[];
}

export interface ConfigVariant {
  filter: Filter;
  key: string;
  payload: unknown;
}

/** A feature's remote-config variants as saved. */
export interface ConfigVariants {
  variants: ConfigVariant[];
}

export type RulesValidation<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

const nonEmptyString = (what: string) =>
  v.pipe(v.string(`${what} must be a string`), v.minLength(1, `${what} must not be empty`));

const valuesSchema = v.optional(
  v.array(v.string("Each value must be a string"), "values must be an array of strings"),
);

// Node schemas are loose objects: unknown extra properties are allowed and kept, since the stored tree is the input.
const ConstantNodeSchema = v.looseObject({
  type: v.literal("constant"),
  value: v.boolean("value must be true or false"),
});

const ContextNodeSchema = v.pipe(
  v.looseObject({
    type: v.literal("context"),
    field: nonEmptyString("field"),
    operator: v.picklist(
      CONTEXT_OPERATORS,
      (issue) => `Unknown operator ${issue.received}; expected one of ${CONTEXT_OPERATORS.join(", ")}`,
    ),
    values: valuesSchema,
  }),
  v.forward(
    v.check(
      (node) => OPERATORS_WITHOUT_VALUES.has(node.operator) || (node.values !== undefined && node.values.length > 0),
      (issue) => `Operator ${(issue.input as { operator: string }).operator} needs at least one value`,
    ),
    ["values"],
  ),
);

const RolloutNodeSchema = v.looseObject({
  type: v.literal("rolloutPercentage"),
  key: nonEmptyString("key"),
  partialRolloutAttribute: nonEmptyString("partialRolloutAttribute"),
  partialRolloutThreshold: v.pipe(
    v.number("partialRolloutThreshold must be a number"),
    v.integer("partialRolloutThreshold must be an integer"),
    v.minValue(0, "partialRolloutThreshold must be at least 0"),
    v.maxValue(MAX_ROLLOUT_THRESHOLD, `partialRolloutThreshold must be at most ${MAX_ROLLOUT_THRESHOLD}`),
  ),
});

const GroupNodeSchema = v.looseObject({
  type: v.literal("group"),
  operator: v.picklist(["and", "or"], (issue) => `Unknown group operator ${issue.received}; expected and, or`),
  filters: v.array(v.unknown(), "filters must be an array"),
});

const NegationNodeSchema = v.looseObject({
  type: v.literal("negation"),
  filter: v.nonOptional(v.unknown(), "filter is required"),
});

/** One filter node with its children left unchecked; the walker below checks them. */
const FilterNodeSchema = v.variant(
  "type",
  [ConstantNodeSchema, ContextNodeSchema, RolloutNodeSchema, GroupNodeSchema, NegationNodeSchema],
  (issue) => `Unknown filter type ${issue.received}; expected one of ${FILTER_TYPES.join(", ")}`,
);

const TargetingShapeSchema = v.looseObject({
  rules: v.array(
    v.looseObject({ filter: v.nonOptional(v.unknown(), "filter is required") }),
    "rules must be an array",
  ),
});

const ConfigShapeSchema = v.looseObject({
  variants: v.array(
    v.looseObject({
      filter: v.nonOptional(v.unknown(), "filter is required"),
      key: nonEmptyString("key"),
      // Optional: a variant without a payload is evaluated as payload null.
      payload: v.optional(v.unknown()),
    }),
    "variants must be an array",
  ),
});

/**
 * What a tree may hold besides the five SDK filter types. `segments`: `{type: "segment", segmentId}` nodes (the
 * management API's; inlined before anything is served). `companyOnly`: context fields and rollout attributes must be
 * `company.*` (a segment is a set of companies).
 */
export interface FilterTreeOptions {
  segments?: boolean;
  companyOnly?: boolean;
  /** MAX_FILTER_DEPTH unless given: the evaluator admits served trees, prerequisites compiled in, deeper. */
  maxDepth?: number;
}

const SegmentNodeSchema = v.looseObject({ type: v.literal("segment"), segmentId: nonEmptyString("segmentId") });

/** Validates `{rules: [{filter}]}`; on success returns the input itself, untouched. */
export function validateTargeting(input: unknown, options: FilterTreeOptions = {}): RulesValidation<TargetingRules> {
  const issues: ValidationIssue[] = [];
  const shape = v.safeParse(TargetingShapeSchema, input);
  if (!shape.success) {
    collectValibotIssues(shape.issues, "", issues);
    return { ok: false, issues };
  }
  shape.output.rules.forEach((rule, index) => validateFilterTree(rule.filter, `rules.${index}.filter`, issues, options));
  return issues.length === 0 ? { ok: true, value: input as TargetingRules } : { ok: false, issues };
}

/** Validates `{variants: [{filter, key, payload}]}`; on success returns the input itself, untouched. */
export function validateConfig(input: unknown): RulesValidation<ConfigVariants> {
  const issues: ValidationIssue[] = [];
  const shape = v.safeParse(ConfigShapeSchema, input);
  if (!shape.success) {
    collectValibotIssues(shape.issues, "", issues);
    return { ok: false, issues };
  }
  shape.output.variants.forEach((variant, index) =>
    validateFilterTree(variant.filter, `variants.${index}.filter`, issues),
  );
  return issues.length === 0 ? { ok: true, value: input as ConfigVariants } : { ok: false, issues };
}

/** Validates one filter tree rooted at `rootPath` (depth 1), appending issues in document order. */
export function validateFilterTree(root: unknown, rootPath: string, issues: ValidationIssue[], options: FilterTreeOptions = {}): void {
  interface Pending {
    node: unknown;
    path: string;
    depth: number;
    parent: Pending | null;
  }
  const stack: Pending[] = [{ node: root, path: rootPath, depth: 1, parent: null }];
  while (stack.length > 0 && issues.length < MAX_REPORTED_ISSUES) {
    const pending = stack.pop() as Pending;
    const { node, path, depth } = pending;
    const maxDepth = options.maxDepth ?? MAX_FILTER_DEPTH;
    if (depth > maxDepth) {
      issues.push({ path, message: `Filters may be nested at most ${maxDepth} levels deep` });
      continue;
    }
    if (typeof node !== "object" || node === null || Array.isArray(node)) {
      issues.push({ path, message: "A filter must be an object" });
      continue;
    }
    if (isOwnAncestor(pending)) {
      // Only an in-memory object can do this (JSON cannot); without the check a cycle would be walked to the depth
      // limit once per path, which is exponential in the fan-out.
      issues.push({ path, message: "A filter must not contain itself" });
      continue;
    }
    if (options.segments && (node as { type?: unknown }).type === "segment") {
      const segment = v.safeParse(SegmentNodeSchema, node);
      if (!segment.success) collectValibotIssues(segment.issues, path, issues);
      continue;
    }
    const parsed = v.safeParse(FilterNodeSchema, node);
    if (!parsed.success) {
      collectValibotIssues(parsed.issues, path, issues);
      continue;
    }
    const filter = parsed.output;
    if (options.companyOnly) {
      if (filter.type === "context" && !filter.field.startsWith("company.")) issues.push({ path: `${path}.field`, message: "A segment filters companies: fields must start with company." });
      if (filter.type === "rolloutPercentage" && !filter.partialRolloutAttribute.startsWith("company.")) {
        issues.push({ path: `${path}.partialRolloutAttribute`, message: "A segment filters companies: the rollout attribute must start with company." });
      }
    }
    if (filter.type === "group") {
      // Pushed in reverse so that members are checked, and their issues reported, left to right.
      for (let index = filter.filters.length - 1; index >= 0; index--) {
        const member = filter.filters[index];
        stack.push({ node: member, path: `${path}.filters.${index}`, depth: depth + 1, parent: pending });
      }
    } else if (filter.type === "negation") {
      stack.push({ node: filter.filter, path: `${path}.filter`, depth: depth + 1, parent: pending });
    }
  }
}

function isOwnAncestor(pending: { node: unknown; parent: { node: unknown; parent: unknown } | null }): boolean {
  for (let ancestor = pending.parent; ancestor !== null; ancestor = ancestor.parent as typeof ancestor) {
    if (ancestor.node === pending.node) return true;
  }
  return false;
}

function collectValibotIssues(found: readonly v.BaseIssue<unknown>[], prefix: string, issues: ValidationIssue[]): void {
  for (const issue of found) {
    if (issues.length >= MAX_REPORTED_ISSUES) return;
    const relative = v.getDotPath(issue);
    const path = relative === null || relative === "" ? prefix : prefix === "" ? relative : `${prefix}.${relative}`;
    issues.push({ path, message: describeIssue(issue) });
  }
}

/** valibot reports a missing key as an object issue ("Invalid key: Expected ..."); say plainly what is wrong. */
function describeIssue(issue: v.BaseIssue<unknown>): string {
  if (issue.kind !== "schema" || (issue.type !== "loose_object" && issue.type !== "object")) return issue.message;
  if (issue.expected === "Object") return `Expected an object but received ${issue.received}`;
  const missingKey = issue.path?.[issue.path.length - 1]?.key;
  return typeof missingKey === "string" ? `${missingKey} is required` : issue.message;
}
