/**
 * OFREP against `/features/evaluated` (API.md §14: results equal in every field they share): random rule trees from
 * the parity generators, and 10,000 random contexts sent both ways — to OFREP as JSON (ids now and then as
 * `targetingKey` / `companyId`, user attributes now and then at the top level), to `/features/evaluated` as the
 * browser SDK's query — some naming stored users and companies (remote context). Every flag's value, variant, reason
 * and metadata must follow from the evaluated item and the rules `GET /features` hands out.
 */
import { flattenJSON } from "@bucketco/flag-evaluation";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FeatureDefinition, Filter } from "../../src/evaluation/index.js";
import { useAppServer } from "../support/app-server.js";
import { request } from "../support/http.js";
import { eventually } from "../sdk/fixtures.js";
import { featureDefinitions, sentAttributeValue as VALUE, sentText as TEXT } from "./arbitraries.js";

const STORED_USERS = ["stored-u1", "stored-u2"];
const STORED_COMPANIES = ["stored-c1", "stored-c2"];

/** Attribute names without dots or prototype names, so that the flattened context means one nested context only. */
const ATTRIBUTE = fc.constantFrom("name", "email", "plan", "Plan", "seats", "createdAt", "flag", "tags", "ключ");
const ID = (stored: string[]) => fc.oneof(fc.constantFrom(...stored), TEXT.filter((text) => text !== ""), fc.integer({ min: 0, max: 99 }));
const ENTITY = (stored: string[]) =>
  fc.tuple(fc.option(ID(stored), { nil: undefined }), fc.dictionary(ATTRIBUTE, VALUE, { maxKeys: 4 })).map(([id, attributes]) => (id === undefined ? attributes : { id, ...attributes }));
/** A context, and how to send it to OFREP: which ids become targetingKey / companyId, which user attributes move up. */
const CASE = fc.record({
  context: fc.record({ user: ENTITY(STORED_USERS), company: ENTITY(STORED_COMPANIES), other: fc.dictionary(ATTRIBUTE, VALUE, { maxKeys: 3 }) }, { requiredKeys: [] }),
  targetingKey: fc.boolean(),
  companyId: fc.boolean(),
  lift: fc.boolean(),
});
type Case = typeof CASE extends fc.Arbitrary<infer T> ? T : never;

/** The query the browser SDK builds: every flattened context field under `context.`, sorted, URL-encoded. */
function queryOf(context: Record<string, unknown>): string {
  const flat = flattenJSON({ context });
  return Object.keys(flat)
    .sort()
    .map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(flat[name]!)}`)
    .join("&");
}

/** The same context in OFREP's forms. */
function ofrepContext({ context, targetingKey, companyId, lift }: Case): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (context.user !== undefined) {
    const { id, ...rest } = context.user as Record<string, unknown>;
    const user: Record<string, unknown> = lift ? {} : { ...rest };
    if (lift) Object.assign(out, rest);
    if (id !== undefined && targetingKey) out.targetingKey = id;
    else if (id !== undefined) user.id = id;
    out.user = user;
  }
  if (context.company !== undefined) {
    const { id, ...rest } = context.company as Record<string, unknown>;
    out.company = companyId || id === undefined ? rest : { id, ...rest };
    if (companyId && id !== undefined) out.companyId = id;
  }
  if (context.other !== undefined) out.other = context.other;
  return out;
}

function holdsRollout(filter: Filter): boolean {
  if (filter.type === "rolloutPercentage") return true;
  if (filter.type === "group") return filter.filters.some(holdsRollout);
  if (filter.type === "negation") return holdsRollout(filter.filter);
  return false;
}

/** `access`: the access flag's reason, STATIC for one constant filter whatever its value; a config flag's is DEFAULT when nothing matched. */
function expectedReason(rules: { filter: Filter }[], results: boolean[], access: boolean): string {
  const matched = results.indexOf(true);
  const isStatic = rules.length === 1 && rules[0]!.filter.type === "constant";
  if (access && isStatic) return "STATIC";
  if (matched === -1) return "DEFAULT";
  if (isStatic) return "STATIC";
  return holdsRollout(rules[matched]!.filter) ? "SPLIT" : "TARGETING_MATCH";
}

/** The flags OFREP must answer, from `/features/evaluated`'s items and the rules of `GET /features`. */
function expectedFlags(evaluated: Record<string, any>, flagStateVersion: number, rules: FeatureDefinition[]): Record<string, unknown>[] {
  const flags: Record<string, unknown>[] = [];
  for (const definition of rules) {
    const item = evaluated[definition.key];
    const access: Record<string, unknown> = {
      key: definition.key,
      value: item.isEnabled,
      reason: expectedReason(definition.targeting.rules, item.ruleEvaluationResults, true),
      variant: item.isEnabled ? "on" : "off",
      metadata: { targetingVersion: item.targetingVersion, flagStateVersion, ...(item.config.key !== null ? { configKey: item.config.key } : {}) },
    };
    flags.push(access);
    if (definition.config.variants.length === 0) continue;
    const metadata = { targetingVersion: item.config.version, flagStateVersion };
    flags.push(
      item.config.key === null
        ? { key: `${definition.key}:config`, reason: "DEFAULT", metadata }
        : { key: `${definition.key}:config`, value: item.config.payload, reason: expectedReason(definition.config.variants, item.config.ruleEvaluationResults, false), variant: item.config.key, metadata },
    );
  }
  return flags;
}

/** Contexts compared at least; rulesets are drawn until that many were compared (some trees are refused on save). */
const CONTEXTS = 10_000;
const CONTEXTS_PER_RULESET = 250;
const RULESETS = 80;
const CONCURRENCY = 16;

describe("OFREP equals /features/evaluated", () => {
  const app = useAppServer();

  it(`for ${CONTEXTS} random contexts over random rulesets (${CONTEXTS_PER_RULESET} each)`, { timeout: 600_000 }, async () => {
    const token = app.keys.production.publishableKey;
    for (const [index, id] of STORED_USERS.entries()) {
      expect((await request(app.server.url, "POST", "/user", { token, body: { userId: id, attributes: { plan: `p${index}`, seats: index * 7, name: "Stored" } } })).status).toBe(200);
    }
    for (const [index, id] of STORED_COMPANIES.entries()) {
      expect((await request(app.server.url, "POST", "/company", { token, body: { companyId: id, attributes: { plan: index === 0 ? "enterprise" : "free", tags: ["a", "b"] } } })).status).toBe(200);
    }
    await eventually(async () => (await request(app.server.url, "GET", `/features/evaluated?context.company.id=${STORED_COMPANIES[1]}`, { token })).body.remoteContextUsed === true);
    const samples = fc.sample(fc.tuple(featureDefinitions(), fc.array(CASE, { minLength: CONTEXTS_PER_RULESET, maxLength: CONTEXTS_PER_RULESET })), { numRuns: RULESETS, seed: 20261202 });
    let compared = 0;
    let remote = 0;
    let storedRulesets = 0;
    for (const [definitions, cases] of samples) {
      if (compared >= CONTEXTS) break;
      const saved = await app.replaceFeatures(definitions);
      const stored = saved.every(({ targeting, config }) => targeting.status === 200 && config.status === 200);
      if (!stored) continue;
      storedRulesets++;
      const rules = (await request<{ features: FeatureDefinition[] }>(app.server.url, "GET", "/features", { token: app.keys.production.secretKey })).body.features;
      for (let start = 0; start < cases.length; start += CONCURRENCY) {
        await Promise.all(
          cases.slice(start, start + CONCURRENCY).map(async (sample) => {
            const query = queryOf(sample.context);
            const [evaluated, ofrep] = await Promise.all([
              request(app.server.url, "GET", `/features/evaluated?${query}`, { token }),
              request(app.server.url, "POST", "/ofrep/v1/evaluate/flags", { token, body: { context: ofrepContext(sample) } }),
            ]);
            expect(evaluated.status, query).toBe(200);
            expect(ofrep.status, JSON.stringify(sample)).toBe(200);
            const expected = expectedFlags(evaluated.body.features, evaluated.body.flagStateVersion, rules);
            // Flags come in the answer's order (array-index keys first, as a JSON object of them lists them).
            const byKey = (flags: Record<string, unknown>[]) => [...flags].sort((a, b) => (String(a.key) < String(b.key) ? -1 : 1));
            expect(byKey(ofrep.body.flags), `${JSON.stringify(ofrepContext(sample))}\nrules ${JSON.stringify(rules)}`).toEqual(byKey(expected));
            if (evaluated.body.remoteContextUsed) remote++;
            compared++;
          }),
        );
      }
    }
    expect(compared).toBe(storedRulesets * CONTEXTS_PER_RULESET);
    expect(compared).toBeGreaterThanOrEqual(CONTEXTS);
    // Remote context must have been exercised, not only possible.
    expect(remote).toBeGreaterThan(compared / 10);
  });
});
