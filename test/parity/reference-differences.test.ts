/**
 * The two parity references side by side: `@bucketco/flag-evaluation` 0.2.1 and `@reflag/flag-evaluation` 1.0.1.
 * Their evaluation (rules, operators, rollout hash, `flattenJSON`) is the same code under new names (`featureKey` →
 * `flagKey`); the parity suites check every case against both. The one difference is `unflattenJSON`, which no
 * evaluation path uses: Reflag's skips path segments `__proto__`, `constructor` and `prototype` (and own keys only),
 * Bucket's follows them. Switchyard's context rebuild refuses such segments with a 400 — on Reflag's side.
 */
import * as bucket from "@bucketco/flag-evaluation";
import * as reflag from "@reflag/flag-evaluation";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contextFromQuery } from "../../src/evaluation/context-from-query.js";

const KEY = fc.constantFrom("user", "company", "other", "id", "plan", "a", "b", "0", "1", "ключ");
const LEAF = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
const CONTEXT = fc.dictionary(KEY, fc.oneof(LEAF, fc.dictionary(KEY, fc.oneof(LEAF, fc.array(LEAF, { maxLength: 3 })), { maxKeys: 3 })), { maxKeys: 4 });

describe("@bucketco/flag-evaluation 0.2.1 and @reflag/flag-evaluation 1.0.1", () => {
  it("flatten contexts identically", () => {
    fc.assert(fc.property(CONTEXT, (context) => {
          expect(reflag.flattenJSON(context)).toEqual(bucket.flattenJSON(context));
        }), { numRuns: 2_000 });
  });

  it("unflatten identically on ordinary paths", () => {
    fc.assert(
      fc.property(CONTEXT, (context) => {
        const flat = bucket.flattenJSON(context);
        expect(reflag.unflattenJSON(flat)).toEqual(bucket.unflattenJSON(flat));
      }),
      { numRuns: 2_000 },
    );
  });

  it("differ in unflattenJSON on prototype path segments, where Switchyard refuses the path", () => {
    // `prototype` is the safe one to show: Bucket's `__proto__` path would write into Object.prototype itself.
    const flat = { "user.prototype.admin": "true", "user.id": "u1" };
    expect(bucket.unflattenJSON(flat)).toEqual({ user: { id: "u1", prototype: { admin: "true" } } });
    expect(reflag.unflattenJSON(flat)).toEqual({ user: { id: "u1" } });
    const ours = contextFromQuery("context.user.prototype.admin=true&context.user.id=u1");
    expect(ours.ok).toBe(false);
  });
});
