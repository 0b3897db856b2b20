/**
 * Context operators compiled once per rule version into tests on a flattened field value. Semantics are those of the
 * reference `evaluate()`: `values[0]` is the operand of every operator but ANY_OF / NOT_ANY_OF, which use the list.
 */
import type { ContextOperator } from "../schemas/rules.js";

/** A compiled operator applied to a field that is present in the flattened context. */
export type FieldTest = (value: string) => boolean;

const always: FieldTest = () => true;
const never: FieldTest = () => false;

/** Compiles `operator` with its `values` into a test; operands are parsed, lower-cased or put in Sets here, once. */
export function compileFieldTest(operator: ContextOperator, values: readonly string[]): FieldTest {
  const operand = values[0] ?? "";
  switch (operator) {
    case "IS":
      return (value) => value === operand;
    case "IS_NOT":
      return (value) => value !== operand;
    case "ANY_OF":
      return anyOfTest(values, true);
    case "NOT_ANY_OF":
      return anyOfTest(values, false);
    case "CONTAINS": {
      const needle = operand.toLowerCase();
      return needle === "" ? always : (value) => lowerCase(value).includes(needle);
    }
    case "NOT_CONTAINS": {
      const needle = operand.toLowerCase();
      return needle === "" ? never : (value) => !lowerCase(value).includes(needle);
    }
    case "GT": {
      // The reference answers false when either side is NaN; `NaN > x` is already false, so one check suffices.
      const limit = Number(operand);
      return Number.isNaN(limit) ? never : (value) => Number(value) > limit;
    }
    case "LT": {
      const limit = Number(operand);
      return Number.isNaN(limit) ? never : (value) => Number(value) < limit;
    }
    case "AFTER":
      return daysAgoTest(Number(operand), true);
    case "BEFORE":
      return daysAgoTest(Number(operand), false);
    case "DATE_AFTER": {
      const limit = new Date(operand).getTime();
      return Number.isNaN(limit) ? never : (value) => timeOf(value) >= limit;
    }
    case "DATE_BEFORE": {
      const limit = new Date(operand).getTime();
      return Number.isNaN(limit) ? never : (value) => timeOf(value) <= limit;
    }
    case "SET":
      return (value) => value !== "";
    case "NOT_SET":
      return (value) => value === "";
    case "IS_TRUE":
      return (value) => value === "true";
    case "IS_FALSE":
      return (value) => value === "false";
    default:
      // Unreachable for a validated rule; the reference answers false for an unknown operator.
      return never;
  }
}

let lastValue = "";
let lastLowerCase = "";

/**
 * `value.toLowerCase()`, remembering the last one: the CONTAINS filters of many features usually read one field
 * (an email), so one evaluation lower-cases it once instead of once per filter.
 */
function lowerCase(value: string): string {
  if (value !== lastValue) {
    lastLowerCase = value.toLowerCase();
    lastValue = value;
  }
  return lastLowerCase;
}

let lastDateValue = "";
let lastTime = Number.NaN;

/**
 * `new Date(value).getTime()`, remembering the last one: date rules usually read one stored field (a company's
 * `createdAt`), and parsing the same string again for every feature that tests it showed in a worker's profile
 * (docs/BENCHMARKS.md, "Figures behind the code"). The result depends on the string alone (and the process's time zone, which does not change).
 */
function timeOf(value: string): number {
  if (value !== lastDateValue) {
    lastTime = new Date(value).getTime();
    lastDateValue = value;
  }
  return lastTime;
}

function anyOfTest(values: readonly string[], wanted: boolean): FieldTest {
  if (values.length === 1) {
    const only = values[0];
    return wanted ? (value) => value === only : (value) => value !== only;
  }
  const membership = membershipOf(values);
  return wanted ? (value) => membership.has(value) : (value) => !membership.has(value);
}

/**
 * A value list as a Set, shared by every filter with the same list, remembering its last answer. Features often test
 * one list (an allow-list of companies, a segment, `plan ANY_OF business, enterprise`), so one evaluation looks the
 * context's value up once instead of once per feature, where large rulesets made many lookups in Sets of the same
 * values (docs/BENCHMARKS.md, "Figures behind the code").
 */
class Membership {
  private readonly set: ReadonlySet<string>;
  private lastValue: string | undefined = undefined;
  private lastAnswer = false;

  constructor(values: readonly string[]) {
    this.set = new Set(values);
  }

  has(value: string): boolean {
    if (value !== this.lastValue) {
      this.lastAnswer = this.set.has(value);
      this.lastValue = value;
    }
    return this.lastAnswer;
  }
}

/** Shared lists by their JSON; emptied when they hold this many values (lists of rulesets long replaced go with them). */
const MAX_SHARED_VALUES = 1_000_000;
const memberships = new Map<string, Membership>();
let sharedValues = 0;

function membershipOf(values: readonly string[]): Membership {
  const key = JSON.stringify(values);
  let membership = memberships.get(key);
  if (membership === undefined) {
    if (sharedValues + values.length > MAX_SHARED_VALUES) {
      memberships.clear();
      sharedValues = 0;
    }
    membership = new Membership(values);
    memberships.set(key, membership);
    sharedValues += values.length;
  }
  return membership;
}

/**
 * AFTER / BEFORE: the field's date is later / earlier than `days` days before now, "days before" computed as the
 * reference does (local calendar `setDate`, so DST and fractional days behave the same). The limit depends on the
 * clock, so it is recomputed when the millisecond changes rather than compiled.
 */
function daysAgoTest(days: number, after: boolean): FieldTest {
  let limitComputedAt = Number.NaN;
  let limit = Number.NaN;
  return (value) => {
    const now = Date.now();
    if (now !== limitComputedAt) {
      const daysAgo = new Date(now);
      daysAgo.setDate(daysAgo.getDate() - days);
      limit = daysAgo.getTime();
      limitComputedAt = now;
    }
    const date = timeOf(value);
    return after ? date > limit : date < limit;
  };
}

/** Whether the field counts as missing when absent: every operator but SET and NOT_SET reports it and is false. */
export function reportsMissingField(operator: ContextOperator): boolean {
  return operator !== "SET" && operator !== "NOT_SET";
}

/**
 * The reference looks fields up with `field in flatContext` on a plain object, so a field named like a member of
 * Object.prototype ("toString", "constructor", "__proto__", …) is never missing: absent from the context, its value
 * is that member (a function, or Object.prototype for "__proto__"). Returns that value, or undefined for ordinary
 * names.
 */
export function inheritedFieldValue(field: string): unknown {
  return field in Object.prototype ? Reflect.get(Object.prototype, field, {}) : undefined;
}

/**
 * The result of `operator` on an inherited (non-string) value, as the reference computes it: such a value is never
 * "", never equal to or in a list of strings, NaN as a number or date, and its string form is never "true"/"false".
 * CONTAINS / NOT_CONTAINS make the reference throw (no toLowerCase on a function); here they are false, since
 * evaluation never throws.
 */
export function inheritedFieldResult(operator: ContextOperator): boolean {
  return operator === "SET" || operator === "IS_NOT" || operator === "NOT_ANY_OF";
}
