/** The rule language of API.md §3, as the editor builds it. Trees are kept exactly as the server stores them. */

export type Operator =
  | "IS" | "IS_NOT" | "ANY_OF" | "NOT_ANY_OF" | "CONTAINS" | "NOT_CONTAINS" | "GT" | "LT"
  | "AFTER" | "BEFORE" | "DATE_AFTER" | "DATE_BEFORE" | "SET" | "NOT_SET" | "IS_TRUE" | "IS_FALSE";

export type Filter =
  | { type: "constant"; value: boolean }
  | { type: "context"; field: string; operator: Operator; values?: string[] }
  | { type: "rolloutPercentage"; key: string; partialRolloutAttribute: string; partialRolloutThreshold: number }
  | { type: "group"; operator: "and" | "or"; filters: Filter[] }
  | { type: "negation"; filter: Filter };

export type FilterType = Filter["type"];

/** How each operator's value is entered: the input that fits what the evaluator compares. */
export type ValueInput = "none" | "text" | "list" | "number" | "days" | "date";

export const OPERATORS: { value: Operator; label: string; input: ValueInput }[] = [
  { value: "IS", label: "is", input: "text" },
  { value: "IS_NOT", label: "is not", input: "text" },
  { value: "ANY_OF", label: "is any of", input: "list" },
  { value: "NOT_ANY_OF", label: "is none of", input: "list" },
  { value: "CONTAINS", label: "contains", input: "text" },
  { value: "NOT_CONTAINS", label: "does not contain", input: "text" },
  { value: "GT", label: "greater than", input: "number" },
  { value: "LT", label: "less than", input: "number" },
  { value: "AFTER", label: "more than N days ago", input: "days" },
  { value: "BEFORE", label: "less than N days ago", input: "days" },
  { value: "DATE_AFTER", label: "on or after date", input: "date" },
  { value: "DATE_BEFORE", label: "on or before date", input: "date" },
  { value: "SET", label: "is set", input: "none" },
  { value: "NOT_SET", label: "is not set", input: "none" },
  { value: "IS_TRUE", label: "is true", input: "none" },
  { value: "IS_FALSE", label: "is false", input: "none" },
];

export function inputOf(operator: string): ValueInput {
  return OPERATORS.find((entry) => entry.value === operator)?.input ?? "text";
}

export const FILTER_TYPES: { value: FilterType; label: string }[] = [
  { value: "context", label: "Attribute condition" },
  { value: "group", label: "Group (AND / OR)" },
  { value: "negation", label: "NOT" },
  { value: "rolloutPercentage", label: "Percentage rollout" },
  { value: "constant", label: "Constant" },
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

/** A short human reading of a filter tree, for lists and history. */
export function describe(filter: Filter): string {
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
      return filter.filters.length === 0 ? (filter.operator === "and" ? "everyone" : "no one") : `(${filter.filters.map(describe).join(` ${filter.operator.toUpperCase()} `)})`;
    case "negation":
      return `NOT ${describe(filter.filter)}`;
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
