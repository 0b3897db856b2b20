/**
 * Rollout buckets under traffic whose values do not come back: the bucket rows are bypassed, and buckets are hashed
 * four at a time (rollout-slots.ts, sha256x4.ts); under values that do (companies), one row lookup per evaluation
 * serves every rollout on the field. Every answer must still be the reference evaluator's.
 */
import { describe, expect, it } from "vitest";
import { compileReference, evaluateReference } from "../../test/parity/reference.js";
import { compileRuleset } from "./compile-ruleset.js";
import { contextValues } from "./evaluate-ruleset.js";
import { writeAnswer } from "./answer-writer.js";
import { batchedBuckets } from "./rollout-slots.js";
import type { FeatureDefinition, Filter } from "./types.js";

const rollout = (key: string, attribute: string, threshold: number): Filter => ({ type: "rolloutPercentage", key, partialRolloutAttribute: attribute, partialRolloutThreshold: threshold });
const isAdmin: Filter = { type: "context", field: "user.role", operator: "IS", values: ["admin"] };

/** Rollouts on user ids (some behind a condition, so that some speculative lanes go unread), on long and non-ASCII values too. */
function definitions(): FeatureDefinition[] {
  return Array.from({ length: 12 }, (_, index): FeatureDefinition => {
    const key = `feature-${index}`;
    const targeting: Filter = index % 3 === 0 ? { type: "group", operator: "and", filters: [isAdmin, rollout(key, "user.id", 50_000)] } : rollout(key, index % 4 === 1 ? "user.name" : "user.id", 30_000 + index * 1_000);
    return {
      key,
      stage: null,
      targeting: { version: 1, rules: [{ filter: targeting }] },
      config: { version: 1, variants: [{ filter: rollout(`${key}-config`, "user.id", 50_000), key: "on", payload: { index } }] },
    };
  });
}

describe("batched rollout buckets", () => {
  it("answer like the reference once the caches bypass themselves", () => {
    const defined = definitions();
    const ruleset = compileRuleset(defined);
    const reference = compileReference(defined);
    const decoder = new TextDecoder();
    const batchedBefore = batchedBuckets.count;
    // Past one sample window (4,096 lookups per rollout key) and far into the bypass that follows it.
    for (let user = 0; user < 12_000; user++) {
      const name = user % 7 === 0 ? `Ünïcode ${user}` : user % 11 === 0 ? `a name long enough to need a second SHA-256 block ${user}` : `n${user}`;
      const context = { user: { id: `user-${user}`, role: user % 3 === 0 ? "admin" : "member", name } };
      const answer = JSON.parse(decoder.decode(writeAnswer(ruleset, contextValues(ruleset, context), { flagStateVersion: 1, remoteContextUsed: false })));
      const expected = Object.fromEntries(evaluateReference(reference, context).map((item) => [item.key, item]));
      expect(answer.features).toEqual(JSON.parse(JSON.stringify(expected)));
    }
    expect(ruleset.rolloutCaches.slots.some((slot) => slot.rows.bypassing)).toBe(true);
    // Most buckets came from the batched path, not one by one.
    expect(batchedBuckets.count - batchedBefore).toBeGreaterThan(12_000 * 4);
  });

  it("stop hashing ahead the rollouts behind a condition most contexts fail, and answer the same", () => {
    // Six rollouts on user.id read by every context, six behind `user.role IS admin`, which no context here meets.
    const defined = Array.from({ length: 12 }, (_, index): FeatureDefinition => {
      const key = `guarded-${index}`;
      const targeting: Filter = index % 2 === 0 ? rollout(key, "user.id", 40_000) : { type: "group", operator: "and", filters: [isAdmin, rollout(key, "user.id", 40_000)] };
      return { key, stage: null, targeting: { version: 1, rules: [{ filter: targeting }] }, config: { version: 0, variants: [] } };
    });
    const ruleset = compileRuleset(defined);
    const reference = compileReference(defined);
    const decoder = new TextDecoder();
    const lanesPerContext = (from: number, count: number) => {
      const before = batchedBuckets.count;
      for (let user = from; user < from + count; user++) {
        const context = { user: { id: `user-${user}`, role: "member" } };
        const answer = JSON.parse(decoder.decode(writeAnswer(ruleset, contextValues(ruleset, context), { flagStateVersion: 1, remoteContextUsed: false })));
        const expected = Object.fromEntries(evaluateReference(reference, context).map((item) => [item.key, item]));
        expect(answer.features).toEqual(JSON.parse(JSON.stringify(expected)));
      }
      return (batchedBuckets.count - before) / count;
    };
    // Past the caches' sample window and a judgement of the slots (every 1,024 evaluations).
    lanesPerContext(0, 6_000);
    expect(ruleset.rolloutCaches.slots.every((slot) => slot.rows.bypassing)).toBe(true);
    expect(ruleset.rolloutCaches.slots.filter((slot) => slot.speculate)).toHaveLength(6);
    // Only the six rollouts every context reads are hashed.
    expect(lanesPerContext(6_000, 2_000)).toBe(6);
  });

  it("look up a field's rows once per evaluation however many rollouts read it, fill them four at a time, and answer the same from them", () => {
    const defined = Array.from({ length: 8 }, (_, index): FeatureDefinition => {
      const key = `by-company-${index}`;
      return { key, stage: null, targeting: { version: 1, rules: [{ filter: rollout(key, "company.id", 20_000 + index * 8_000) }] }, config: { version: 0, variants: [] } };
    });
    const ruleset = compileRuleset(defined);
    const reference = compileReference(defined);
    const decoder = new TextDecoder();
    const rows = ruleset.rolloutCaches.fields;
    expect(rows).toHaveLength(1);
    const lookupsBefore = rows[0]!.lookups;
    const batchedBefore = batchedBuckets.count;
    for (let request = 0; request < 3_000; request++) {
      const context = { company: { id: `company-${request % 50}` } };
      const answer = JSON.parse(decoder.decode(writeAnswer(ruleset, contextValues(ruleset, context), { flagStateVersion: 1, remoteContextUsed: false })));
      const expected = Object.fromEntries(evaluateReference(reference, context).map((item) => [item.key, item]));
      expect(answer.features).toEqual(JSON.parse(JSON.stringify(expected)));
    }
    expect(rows[0]!.lookups - lookupsBefore).toBe(3_000);
    // Each company's row was filled once, four buckets per hash.
    expect(batchedBuckets.count - batchedBefore).toBe(50 * 8);
    expect(rows[0]!.bypassing).toBe(false);
    expect(rows[0]!.has("company-7")).toBe(true);
  });
});
