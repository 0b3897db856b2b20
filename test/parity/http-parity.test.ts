/**
 * The parity property end to end: random rule trees stored through the management API, random contexts sent the way
 * the browser SDK sends them (flattened, sorted, URL-encoded `context.*` parameters), and every item of
 * `/features/evaluated` compared with the reference evaluator run on the rules `GET /features` hands out.
 */
import { flattenJSON } from "@bucketco/flag-evaluation";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type { FeatureDefinition } from "../../src/evaluation/index.js";
import { useAppServer } from "../support/app-server.js";
import { request } from "../support/http.js";
import { featureDefinitions, sentAttributeValue as VALUE } from "./arbitraries.js";
import { evaluateWithReference, REFERENCE_NAMES } from "./reference.js";

/** Attribute names without dots or prototype names, so that the flattened context means one nested context only. */
const ATTRIBUTE = fc.constantFrom("id", "name", "email", "plan", "Plan", "seats", "createdAt", "flag", "tags", "ключ");
const ENTITY = fc.dictionary(ATTRIBUTE, VALUE, { maxKeys: 4 });
const CONTEXT = fc.record({ user: ENTITY, company: ENTITY, other: ENTITY }, { requiredKeys: [] });

/** The query the browser SDK builds: every flattened context field under `context.`, sorted, URL-encoded. */
function queryOf(context: Record<string, unknown>): string {
  const flat = flattenJSON({ context });
  return Object.keys(flat)
    .sort()
    .map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(flat[name]!)}`)
    .join("&");
}

/** Whether a rule tree holds a string (value or key) that is not well-formed Unicode: a lone surrogate. */
const holdsLoneSurrogate = (value: unknown): boolean =>
  typeof value === "string"
    ? !value.isWellFormed()
    : typeof value === "object" && value !== null && Object.entries(value).some(([name, item]) => !name.isWellFormed() || holdsLoneSurrogate(item));

const RULESETS = 60;
const CONTEXTS_PER_RULESET = 15;

describe("evaluation parity over HTTP, with @bucketco/flag-evaluation and @reflag/flag-evaluation", () => {
  const app = useAppServer();

  it(`answers like both references for ${RULESETS} random rulesets × ${CONTEXTS_PER_RULESET} random contexts`, { timeout: 120_000 }, async () => {
    const samples = fc.sample(fc.tuple(featureDefinitions(), fc.array(CONTEXT, { minLength: CONTEXTS_PER_RULESET, maxLength: CONTEXTS_PER_RULESET })), {
      numRuns: RULESETS,
      seed: 20261122,
    });
    let compared = 0;
    let storedRulesets = 0;
    let refusedForSurrogates = 0;
    // The reference reports unparsable dates on console.error; the generated values include some on purpose.
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const [definitions, contexts] of samples) {
        // Start each ruleset from a clean app-level feature list.
        const saved = await app.replaceFeatures(definitions);
        // Trees the reference would also reject (a missing operand, say) are refused on save: nothing to compare.
        const stored = saved.every(({ targeting, config }) => targeting.status === 200 && config.status === 200);
        for (const { definition, targeting, config } of saved) {
          // A lone surrogate (API.md §2) is refused, never stored as U+FFFD: rules served otherwise than they were saved
          // would evaluate otherwise than the reference does on what was sent.
          for (const [sent, reply] of [[definition.targeting.rules, targeting], [definition.config.variants, config]] as const) {
            if (!holdsLoneSurrogate(sent)) continue;
            expect(reply.status, JSON.stringify(sent)).toBe(400);
            expect(reply.body.error.validationErrors[0].message).toMatch(/lone UTF-16 surrogate/);
            refusedForSurrogates++;
          }
        }
        if (!stored) continue;
        storedRulesets++;
        const rules = await request<{ features: FeatureDefinition[] }>(app.server.url, "GET", "/features", { token: app.keys.production.secretKey });
        for (const context of contexts) {
          const query = queryOf(context);
          const answer = await request(app.server.url, "GET", `/features/evaluated?${query}`, { token: app.keys.production.publishableKey });
          expect(answer.status, query).toBe(200);
          for (const reference of REFERENCE_NAMES) {
            const expected = Object.fromEntries(evaluateWithReference(rules.body.features, context, {}, reference).map((item) => [item.key, JSON.parse(JSON.stringify(item))]));
            expect(answer.body.features, `${reference}: context ${JSON.stringify(context)}\nrules ${JSON.stringify(rules.body.features)}`).toEqual(expected);
          }
          compared++;
        }
      }
    } finally {
      quiet.mockRestore();
    }
    // The comparison only means something if most generated rulesets were storable.
    expect(storedRulesets).toBeGreaterThan(RULESETS / 2);
    // The generators draw lone surrogates as rule operands: the refusal above was exercised.
    expect(refusedForSurrogates).toBeGreaterThan(0);
    expect(compared).toBe(storedRulesets * CONTEXTS_PER_RULESET);
  });
});
