/**
 * Compiles one validated filter tree into a tree of closures. Evaluation order, short-circuiting and missing-field
 * reports are those of the reference `evaluateRecursively`; constants are folded only where no report can change.
 */
import type { ContextFilter, Filter, GroupFilter, RolloutPercentageFilter } from "../schemas/rules.js";
import {
  compileFieldTest,
  inheritedFieldResult,
  inheritedFieldValue,
  reportsMissingField,
} from "./operators.js";
import { FieldRegistry } from "./field-registry.js";
import { ROLLOUT_SCALE, rolloutBucket } from "./rollout-bucket.js";
import type { EvaluationScope } from "./evaluation-scope.js";
import { RolloutCaches } from "./rollout-hash.js";
import { readBucket } from "./rollout-slots.js";

/** A scope over `values` with room to report every field of `fields` missing and a bucket for every rollout slot. */
export function createScope(values: ArrayLike<string | undefined>, fields: FieldRegistry, caches: RolloutCaches): EvaluationScope {
  return {
    values,
    missing: new Int32Array(Math.max(1, fields.size)),
    missingCount: 0,
    slots: caches.slots,
    buckets: new Int32Array(caches.slots.length).fill(-1),
    rows: new Array<Int32Array | null | undefined>(caches.fields.length).fill(undefined),
    evaluations: 0,
  };
}

/** The names of the fields the scope reports missing, in report order. */
export function missingNames(scope: EvaluationScope, fields: FieldRegistry): string[] {
  const names = new Array<string>(scope.missingCount);
  for (let index = 0; index < scope.missingCount; index++) names[index] = fields.names[scope.missing[index]!]!;
  return names;
}

/** A compiled filter: its result for the scope's context. */
export type FilterFn = (scope: EvaluationScope) => boolean;

export interface CompiledFilter {
  run: FilterFn;
  /** Set when the filter always gives this result and reports nothing, so that enclosing nodes may fold it. */
  constant: boolean | undefined;
}

const TRUE: CompiledFilter = { run: () => true, constant: true };
const FALSE: CompiledFilter = { run: () => false, constant: false };

function constant(value: boolean): CompiledFilter {
  return value ? TRUE : FALSE;
}

/**
 * Compiles a filter that passed `validateFilterTree`, so its depth is bounded (MAX_SERVED_FILTER_DEPTH) and recursion
 * is safe. Rollout
 * filters take their bucket cache from `caches` (one per ruleset). Every context field the filter reads is registered
 * in `fields`: a scope's `values` must hold the flattened context's value of each of them at its id. Throws only on a
 * shape validation rejects; callers compile validated trees and catch anyway.
 */
export function compileFilter(
  filter: Filter,
  caches: RolloutCaches = new RolloutCaches(),
  fields: FieldRegistry = new FieldRegistry(),
): CompiledFilter {
  switch (filter.type) {
    case "constant":
      return constant(filter.value);
    case "context":
      return compileContextFilter(filter, fields.idOf(String(filter.field)));
    case "rolloutPercentage": {
      const fieldId = fields.idOf(String(filter.partialRolloutAttribute));
      return compileRolloutFilter(filter, fieldId, caches.slotFor(filter.key, fieldId));
    }
    case "group":
      return compileGroup(filter, caches, fields);
    case "negation": {
      const inner = compileFilter(filter.filter, caches, fields);
      if (inner.constant !== undefined) return constant(!inner.constant);
      const run = inner.run;
      return { run: (scope) => !run(scope), constant: undefined };
    }
    default:
      throw new TypeError(`unknown filter type ${String((filter as { type: unknown }).type)}`);
  }
}

/** Records a missing field once, keeping the first-report order of the reference's Set. */
export function reportMissing(scope: EvaluationScope, fieldId: number): void {
  const { missing, missingCount } = scope;
  for (let index = 0; index < missingCount; index++) if (missing[index] === fieldId) return;
  missing[missingCount] = fieldId;
  scope.missingCount = missingCount + 1;
}

function compileContextFilter(filter: ContextFilter, fieldId: number): CompiledFilter {
  const { field, operator } = filter;
  const test = compileFieldTest(operator, filter.values ?? []);
  if (inheritedFieldValue(field) !== undefined) {
    const whenAbsent = inheritedFieldResult(operator);
    return {
      run: (scope) => {
        const value = scope.values[fieldId];
        return value === undefined ? whenAbsent : test(value);
      },
      constant: undefined,
    };
  }
  if (!reportsMissingField(operator)) {
    // SET / NOT_SET read an absent field as "".
    const whenAbsent = test("");
    return {
      run: (scope) => {
        const value = scope.values[fieldId];
        return value === undefined ? whenAbsent : test(value);
      },
      constant: undefined,
    };
  }
  return {
    run: (scope) => {
      const value = scope.values[fieldId];
      if (value === undefined) {
        reportMissing(scope, fieldId);
        return false;
      }
      return test(value);
    },
    constant: undefined,
  };
}

function compileRolloutFilter(filter: RolloutPercentageFilter, fieldId: number, slot: number): CompiledFilter {
  const { partialRolloutAttribute: attribute, partialRolloutThreshold: threshold } = filter;
  const prefix = `${filter.key}.`;
  // Buckets run 0..100000 inclusive, so these two thresholds decide without hashing.
  const decided = threshold <= 0 ? false : threshold > ROLLOUT_SCALE ? true : undefined;
  const inherited = inheritedFieldValue(attribute);
  const whenAbsent = inherited === undefined ? undefined : rolloutBucket(`${prefix}${String(inherited)}`) < threshold;
  return {
    run: (scope) => {
      const value = scope.values[fieldId];
      if (value === undefined) {
        if (whenAbsent !== undefined) return whenAbsent;
        reportMissing(scope, fieldId);
        return false;
      }
      if (decided !== undefined) return decided;
      return readBucket(scope, slot, value) < threshold;
    },
    constant: undefined,
  };
}

/**
 * Groups evaluate left to right and stop at the first member that decides (false for `and`, true for `or`). A constant
 * member equal to the neutral element (true for `and`) is dropped; one equal to the deciding value fixes the result,
 * but the members before it still run for their missing-field reports, and the members after it never run.
 */
function compileGroup(filter: GroupFilter, caches: RolloutCaches, fields: FieldRegistry): CompiledFilter {
  const isAnd = filter.operator === "and";
  const members: FilterFn[] = [];
  for (const member of filter.filters) {
    const compiled = compileFilter(member, caches, fields);
    if (compiled.constant === undefined) members.push(compiled.run);
    else if (compiled.constant !== isAnd) return decidedGroup(members, isAnd);
  }
  return openGroup(members, isAnd);
}

function openGroup(members: FilterFn[], isAnd: boolean): CompiledFilter {
  const [first, second] = members;
  if (first === undefined) return constant(isAnd);
  // A one-member group is its member: `true && x` and `false || x` are x.
  if (members.length === 1) return { run: first, constant: undefined };
  if (members.length === 2 && second !== undefined) {
    return {
      run: isAnd ? (scope) => first(scope) && second(scope) : (scope) => first(scope) || second(scope),
      constant: undefined,
    };
  }
  return { run: isAnd ? (scope) => every(members, scope) : (scope) => some(members, scope), constant: undefined };
}

/** A group whose result is fixed (`!isAnd`) by a constant member after `members`, which still run for reports. */
function decidedGroup(members: FilterFn[], isAnd: boolean): CompiledFilter {
  if (members.length === 0) return constant(!isAnd);
  const result = !isAnd;
  const chain = openGroup(members, isAnd).run;
  return {
    run: (scope) => {
      chain(scope);
      return result;
    },
    constant: undefined,
  };
}

function every(members: FilterFn[], scope: EvaluationScope): boolean {
  for (const member of members) if (!member(scope)) return false;
  return true;
}

function some(members: FilterFn[], scope: EvaluationScope): boolean {
  for (const member of members) if (member(scope)) return true;
  return false;
}
