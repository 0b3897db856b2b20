/**
 * The rule language of API.md §3, as the editor builds it. Trees are kept exactly as the server stores them. The
 * node types come from the server's schema (type-only: nothing of the server is bundled), so a change to the rule
 * language fails the dashboard's type check until the editor follows it.
 */
import type { ConstantFilter, ContextFilter, ContextOperator, Filter as ServerFilter, GroupFilter, NegationFilter, RolloutPercentageFilter } from "../../schemas/rules";

export type Operator = ContextOperator;

/** A named set of companies of the app (docs/API.md, segments): inlined by the service when the rules are saved. */
export interface SegmentFilter {
  type: "segment";
  segmentId: string;
}

/** The server's filters, with segments allowed at any depth (the service inlines them on save). */
export type Filter =
  | ConstantFilter
  | ContextFilter
  | RolloutPercentageFilter
  | (Omit<GroupFilter, "filters"> & { filters: Filter[] })
  | (Omit<NegationFilter, "filter"> & { filter: Filter })
  | SegmentFilter;

/** Every tree the server stores is one the editor can hold (fails to compile if the server gains a node type). */
type Assert<T extends true> = T;
export type ServerTreesFit = Assert<ServerFilter extends Filter ? true : false>;

export type FilterType = Filter["type"];

/** How each operator's value is entered: the input that fits what the evaluator compares. */
export type ValueInput = "none" | "text" | "list" | "number" | "days" | "date";

/** Each operator of the server's list with its words and input: a `Record`, so a new server operator fails the type check here. */
const OPERATOR_TABLE: Record<Operator, { label: string; input: ValueInput }> = {
  IS: { label: "is", input: "text" },
  IS_NOT: { label: "is not", input: "text" },
  ANY_OF: { label: "is any of", input: "list" },
  NOT_ANY_OF: { label: "is none of", input: "list" },
  CONTAINS: { label: "contains", input: "text" },
  NOT_CONTAINS: { label: "does not contain", input: "text" },
  GT: { label: "greater than", input: "number" },
  LT: { label: "less than", input: "number" },
  AFTER: { label: "more than N days ago", input: "days" },
  BEFORE: { label: "less than N days ago", input: "days" },
  DATE_AFTER: { label: "on or after date", input: "date" },
  DATE_BEFORE: { label: "on or before date", input: "date" },
  SET: { label: "is set", input: "none" },
  NOT_SET: { label: "is not set", input: "none" },
  IS_TRUE: { label: "is true", input: "none" },
  IS_FALSE: { label: "is false", input: "none" },
};

export const OPERATORS: { value: Operator; label: string; input: ValueInput }[] = (Object.keys(OPERATOR_TABLE) as Operator[]).map((value) => ({ value, ...OPERATOR_TABLE[value] }));

export const isKnownOperator = (operator: string): operator is Operator => Object.hasOwn(OPERATOR_TABLE, operator);

export function inputOf(operator: string): ValueInput {
  return OPERATORS.find((entry) => entry.value === operator)?.input ?? "text";
}

export const FILTER_TYPES: { value: FilterType; label: string }[] = [
  { value: "context", label: "Attribute condition" },
  { value: "group", label: "Group (AND / OR)" },
  { value: "negation", label: "NOT" },
  { value: "rolloutPercentage", label: "Percentage rollout" },
  { value: "constant", label: "Constant" },
  { value: "segment", label: "Company in segment" },
];

/** Context fields most rules use; any dotted path into the flattened context is allowed. */
export const COMMON_FIELDS = ["company.id", "company.name", "company.plan", "user.id", "user.email", "user.name", "other.platform"];

/** A fresh filter of a type, carrying over what still makes sense (a NOT wraps the filter it replaces). */
export function filterOfType(type: FilterType, featureKey: string, previous?: Filter): Filter {
  switch (type) {
    case "constant":
      return { type, value: true };
    case "context":
      return { type, field: "company.id", operator: "IS", values: [""] };
    case "rolloutPercentage":
      return { type, key: featureKey, partialRolloutAttribute: "company.id", partialRolloutThreshold: 50_000 };
    case "group":
      return { type, operator: "and", filters: previous && previous.type !== "group" ? [previous] : [] };
    case "negation":
      return { type, filter: previous && previous.type !== "negation" ? previous : { type: "context", field: "company.id", operator: "IS", values: [""] } };
    case "segment":
      return { type, segmentId: "" };
  }
}

/** Values kept when the operator changes to one that takes another kind of input. */
export function valuesFor(operator: Operator, values: string[] | undefined): string[] | undefined {
  const input = inputOf(operator);
  if (input === "none") return undefined;
  if (input === "list") return values && values.length > 0 ? values : [""];
  return [values?.[0] ?? ""];
}

/** Percent (0..100, 0.001 steps) from a threshold in thousandths of a percent, and back. */
export const percentOf = (threshold: number) => threshold / 1000;
export const thresholdOf = (percent: number) => Math.round(Math.min(100, Math.max(0, percent)) * 1000);

export interface Rule {
  filter: Filter;
}

/** A short human reading of a filter tree, for lists and history; `segmentNames` turns segment ids into names. */
export function describe(filter: Filter, segmentNames: ReadonlyMap<string, string> = new Map()): string {
  const inner = (each: Filter) => describe(each, segmentNames);
  switch (filter.type) {
    case "constant":
      return filter.value ? "everyone" : "no one";
    case "context": {
      const label = OPERATORS.find((entry) => entry.value === filter.operator)?.label ?? filter.operator;
      const input = inputOf(filter.operator);
      return input === "none" ? `${filter.field} ${label}` : `${filter.field} ${label} ${(filter.values ?? []).join(", ")}`;
    }
    case "rolloutPercentage":
      return `${percentOf(filter.partialRolloutThreshold)}% by ${filter.partialRolloutAttribute}`;
    case "group":
      return filter.filters.length === 0 ? (filter.operator === "and" ? "everyone" : "no one") : `(${filter.filters.map(inner).join(` ${filter.operator.toUpperCase()} `)})`;
    case "negation":
      return `NOT ${inner(filter.filter)}`;
    case "segment":
      return `companies in segment ${filter.segmentId ? (segmentNames.get(filter.segmentId) ?? filter.segmentId) : "(none chosen)"}`;
  }
}

/** off / some / everyone, as the feature list shows a targeting state. */
export function stateOf(rules: Rule[]): "off" | "some" | "everyone" {
  if (rules.length === 0) return "off";
  const everyone = (filter: Filter): boolean =>
    (filter.type === "constant" && filter.value) ||
    (filter.type === "rolloutPercentage" && filter.partialRolloutThreshold >= 100_000) ||
    (filter.type === "group" && filter.operator === "and" && filter.filters.every(everyone));
  const nobody = (filter: Filter): boolean =>
    (filter.type === "constant" && !filter.value) ||
    (filter.type === "rolloutPercentage" && filter.partialRolloutThreshold <= 0) ||
    (filter.type === "group" && filter.operator === "or" && filter.filters.every(nobody));
  if (rules.some((rule) => everyone(rule.filter))) return "everyone";
  if (rules.every((rule) => nobody(rule.filter))) return "off";
  return "some";
}

export interface LocalIssue {
  path: string;
  message: string;
}

/**
 * What the editor refuses before sending (the service accepts them, but they never mean what a person wants): an
 * empty value where the operator compares one, a number operator with text, a condition without a field, a segment
 * not chosen. Paths are the server's (`rules.0.filter.values`), so each message shows at its node.
 */
export function localIssues(filter: Filter, path: string, out: LocalIssue[] = []): LocalIssue[] {
  switch (filter.type) {
    case "context": {
      if (!filter.field.trim()) out.push({ path: `${path}.field`, message: "Name the attribute this condition reads." });
      const input = inputOf(filter.operator);
      const values = filter.values ?? [];
      if (input === "none") break;
      const given = input === "list" ? values.filter((value) => value.trim() !== "") : values.slice(0, 1).filter((value) => value.trim() !== "");
      if (given.length === 0) out.push({ path: `${path}.values`, message: input === "list" ? "Enter at least one value." : "Enter a value: an empty one matches nothing useful." });
      else if ((input === "number" || input === "days") && !Number.isFinite(Number(given[0]))) out.push({ path: `${path}.values`, message: "Enter a number." });
      break;
    }
    case "group":
      filter.filters.forEach((member, index) => localIssues(member, `${path}.filters.${index}`, out));
      break;
    case "negation":
      localIssues(filter.filter, `${path}.filter`, out);
      break;
    case "segment":
      if (!filter.segmentId) out.push({ path: `${path}.segmentId`, message: "Choose a segment." });
      break;
    case "rolloutPercentage":
      if (!filter.partialRolloutAttribute.trim()) out.push({ path: `${path}.partialRolloutAttribute`, message: "Name the attribute to roll out by." });
      break;
    case "constant":
      break;
  }
  return out;
}

/** Lists split into lines drop their blank lines when saved (a trailing newline is not a value). */
export function tidy(filter: Filter): Filter {
  switch (filter.type) {
    case "context":
      return inputOf(filter.operator) === "list" && filter.values ? { ...filter, values: filter.values.filter((value) => value.trim() !== "") } : filter;
    case "group":
      return { ...filter, filters: filter.filters.map(tidy) };
    case "negation":
      return { ...filter, filter: tidy(filter.filter) };
    default:
      return filter;
  }
}
