import { evaluateFeatureRules } from "@bucketco/flag-evaluation";
import { describe, expect, it } from "vitest";

import type { Filter } from "../schemas/rules.js";
import { compileFilter, createScope, missingNames } from "./compile-filter.js";
import { FieldRegistry } from "./field-registry.js";
import { flattenContext } from "./flatten-context.js";
import { rolloutBucket } from "./rollout-bucket.js";
import { RolloutCaches } from "./rollout-hash.js";

const on: Filter = { type: "constant", value: true };
const off: Filter = { type: "constant", value: false };
const is = (field: string, value: string): Filter => ({ type: "context", field, operator: "IS", values: [value] });
const and = (...filters: Filter[]): Filter => ({ type: "group", operator: "and", filters });
const or = (...filters: Filter[]): Filter => ({ type: "group", operator: "or", filters });
const not = (filter: Filter): Filter => ({ type: "negation", filter });

/** Runs one compiled filter and the reference on the same context; returns ours after checking they agree. */
function evaluateBoth(filter: Filter, context: Record<string, unknown>) {
  const fields = new FieldRegistry();
  const caches = new RolloutCaches();
  const compiled = compileFilter(filter, caches, fields);
  const scope = createScope(fields.valuesOf(flattenContext(context)), fields, caches);
  const result = compiled.run(scope);
  const ours = { result, missing: missingNames(scope, fields) };
  const reference = evaluateFeatureRules({ context, featureKey: "f", rules: [{ filter, value: true }] });
  expect(ours).toEqual({ result: reference.ruleEvaluationResults[0], missing: reference.missingContextFields });
  return ours;
}

describe("compileFilter", () => {
  it("empty and is true, empty or is false", () => {
    expect(compileFilter(and()).constant).toBe(true);
    expect(compileFilter(or()).constant).toBe(false);
    expect(evaluateBoth(and(), {}).result).toBe(true);
    expect(evaluateBoth(or(), {}).result).toBe(false);
  });

  it("folds trees of constants", () => {
    expect(compileFilter(not(and(on, or(off, on)))).constant).toBe(false);
    expect(compileFilter(or(off, not(off))).constant).toBe(true);
  });

  it("never folds a context filter, which may report a missing field", () => {
    expect(compileFilter(is("plan", "pro")).constant).toBeUndefined();
    expect(compileFilter(and(is("plan", "pro"), off)).constant).toBeUndefined();
  });

  it("reports the fields of members evaluated before a deciding constant", () => {
    expect(evaluateBoth(and(is("a", "1"), is("b", "1"), off), {})).toEqual({ result: false, missing: ["a"] });
    expect(evaluateBoth(and(is("a", "1"), is("b", "1"), off), { a: "1" })).toEqual({ result: false, missing: ["b"] });
    expect(evaluateBoth(or(is("a", "1"), on), {})).toEqual({ result: true, missing: ["a"] });
  });

  it("does not report fields skipped by short-circuit", () => {
    expect(evaluateBoth(and(off, is("a", "1")), {})).toEqual({ result: false, missing: [] });
    expect(evaluateBoth(or(is("a", "1"), is("b", "1")), { a: "1" })).toEqual({ result: true, missing: [] });
    expect(evaluateBoth(or(on, is("b", "1")), {})).toEqual({ result: true, missing: [] });
  });

  it("reports each missing field once, in first-seen order", () => {
    const filter = or(is("b", "1"), is("a", "1"), is("b", "2"), not(is("c", "1")));
    expect(evaluateBoth(filter, {})).toEqual({ result: true, missing: ["b", "a", "c"] });
  });

  it("lets SET / NOT_SET read a missing field as empty without reporting it", () => {
    const set: Filter = { type: "context", field: "x", operator: "SET" };
    const notSet: Filter = { type: "context", field: "x", operator: "NOT_SET" };
    expect(evaluateBoth(set, {})).toEqual({ result: false, missing: [] });
    expect(evaluateBoth(notSet, { y: 1 })).toEqual({ result: true, missing: [] });
    expect(evaluateBoth(notSet, { x: null })).toEqual({ result: true, missing: [] });
    expect(evaluateBoth(set, { x: 0 })).toEqual({ result: true, missing: [] });
  });

  it("treats a negated missing field as true, still reporting it", () => {
    expect(evaluateBoth(not(is("a", "1")), {})).toEqual({ result: true, missing: ["a"] });
  });

  it("hashes rollouts with the attribute's flattened value, reporting a missing attribute", () => {
    const rollout = (threshold: number): Filter => ({
      type: "rolloutPercentage",
      key: "huddle",
      partialRolloutAttribute: "company.id",
      partialRolloutThreshold: threshold,
    });
    // huddle.acme hashes to 30148.
    expect(evaluateBoth(rollout(30_149), { company: { id: "acme" } }).result).toBe(true);
    expect(evaluateBoth(rollout(30_148), { company: { id: "acme" } }).result).toBe(false);
    expect(evaluateBoth(rollout(100_000), {})).toEqual({ result: false, missing: ["company.id"] });
    expect(evaluateBoth(rollout(0), { company: { id: "acme" } }).result).toBe(false);
  });

  it("remembers rollout buckets by field value, one hasher per rollout key whichever field it reads", () => {
    const caches = new RolloutCaches();
    const byUser: Filter = { type: "rolloutPercentage", key: "k", partialRolloutAttribute: "user.id", partialRolloutThreshold: 5 };
    const byCompany: Filter = { ...byUser, partialRolloutAttribute: "company.id" };
    const fields = new FieldRegistry();
    const compiled = [compileFilter(byUser, caches, fields), compileFilter(byCompany, caches, fields)];
    const scope = createScope(fields.valuesOf(flattenContext({ user: { id: "u1" }, company: { id: "c1" } })), fields, caches);
    for (const filter of compiled) filter.run(scope);
    expect(caches.keyCount).toBe(1);
    const [onUser, onCompany] = caches.fields;
    expect(onUser!.has("u1")).toBe(true);
    expect(onCompany!.has("c1")).toBe(true);
    expect(onUser!.row("u1")![0]).toBe(rolloutBucket("k.u1"));
    expect(onCompany!.row("c1")![0]).toBe(rolloutBucket("k.c1"));
  });

  it("treats Object.prototype member names as present, like the reference's `in` check", () => {
    expect(evaluateBoth({ type: "context", field: "toString", operator: "SET" }, {})).toEqual({ result: true, missing: [] });
    expect(evaluateBoth(is("constructor", "x"), {})).toEqual({ result: false, missing: [] });
    expect(evaluateBoth(is("toString", "x"), { toString: "x" })).toEqual({ result: true, missing: [] });
    const rollout: Filter = { type: "rolloutPercentage", key: "f", partialRolloutAttribute: "__proto__", partialRolloutThreshold: 100_000 };
    expect(evaluateBoth(rollout, {}).missing).toEqual([]);
  });
});
