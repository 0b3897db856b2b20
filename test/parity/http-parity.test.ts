/**
 * The parity property end to end: random rule trees stored through the management API, with random prerequisites
 * and kill switches (API.md §15), random contexts sent the way the browser SDK sends them (flattened, sorted,
 * URL-encoded `context.*` parameters), and every item of `/features/evaluated` compared with the reference evaluator
 * run on the rules `GET /features` hands out, with the official node SDK evaluating those rules locally, and with
 * what prerequisites mean (prerequisite-oracle.ts).
 */
import { flattenJSON } from "@bucketco/flag-evaluation";
import { ReflagClient } from "@reflag/node-sdk";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import type { FeatureDefinition } from "../../src/evaluation/index.js";
import { useAppServer } from "../support/app-server.js";
import { request } from "../support/http.js";
import { quietLogger } from "../sdk/fixtures.js";
import { featuresWithPrerequisites, sentAttributeValue as VALUE, type ReleaseSettings } from "./arbitraries.js";
import { accessByDefinition, ownRulesReference } from "./prerequisite-oracle.js";
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
const CONTEXTS_PER_RULESET = 200;
/** Contexts in flight at once: the answers are compared as they come. */
const CONCURRENCY = 8;

/** A context the node SDK accepts (its user and company ids must be non-empty strings or numbers when given). */
function sdkAccepts(context: Record<string, unknown>): boolean {
  const idOk = (entity: unknown) => {
    const id = (entity as { id?: unknown } | undefined)?.id;
    return id === undefined || (typeof id === "string" && id.length > 0) || typeof id === "number";
  };
  return idOk(context.user) && idOk(context.company);
}

describe("evaluation parity over HTTP, with @bucketco/flag-evaluation and @reflag/flag-evaluation", () => {
  const app = useAppServer();

  /** Stores each feature's production prerequisites and kill switch (every feature was just saved, switched on). */
  async function saveReleaseSettings(keys: readonly string[], settings: readonly ReleaseSettings[]) {
    const production = `/admin/environments/${app.keys.production.id}/features`;
    for (const [index, key] of keys.entries()) {
      const { prerequisites, switchedOn } = settings[index]!;
      if (prerequisites.length > 0) {
        const reply = await app.admin("PUT", `${production}/${encodeURIComponent(key)}/prerequisites`, { prerequisites });
        expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      }
      if (!switchedOn) expect((await app.admin("PUT", `${production}/${encodeURIComponent(key)}/enabled`, { enabled: false })).status).toBe(200);
    }
  }

  it(`answers like both references and the node SDK for ${RULESETS} random rulesets × ${CONTEXTS_PER_RULESET} random contexts`, { timeout: 180_000 }, async () => {
    const samples = fc.sample(fc.tuple(featuresWithPrerequisites(), fc.array(CONTEXT, { minLength: CONTEXTS_PER_RULESET, maxLength: CONTEXTS_PER_RULESET })), {
      numRuns: RULESETS,
      seed: 20261122,
    });
    let compared = 0;
    let comparedWithSdk = 0;
    let comparedWithPrerequisites = 0;
    let storedRulesets = 0;
    let refusedForSurrogates = 0;
    // A fresh client per ruleset: it fetches the rules at once (a refresh of one client waits out its 1 s throttle).
    const newSdk = async () => {
      const client = new ReflagClient({ secretKey: app.keys.production.secretKey, apiBaseUrl: app.server.url, offline: false, logger: quietLogger(), batchOptions: { flushOnExit: false }, flagsSyncMode: "polling" });
      await client.initialize();
      return client;
    };
    let sdk: ReflagClient | undefined;
    // The reference reports unparsable dates on console.error; the generated values include some on purpose.
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      for (const [{ definitions, settings }, contexts] of samples) {
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
        await saveReleaseSettings(definitions.map((definition) => definition.key), settings);
        const withPrerequisites = settings.some((setting) => setting.prerequisites.length > 0);
        const rules = await request<{ flagStateVersion: number; features: FeatureDefinition[] }>(app.server.url, "GET", "/features", { token: app.keys.production.secretKey });
        sdk?.destroy?.();
        sdk = await newSdk();
        // It holds the very rules compared below.
        expect(sdk.getFlagsForBootstrap({ enableTracking: false }).flagStateVersion).toBe(rules.body.flagStateVersion);
        const own = ownRulesReference(definitions);
        const compare = async (context: Record<string, unknown>) => {
          const query = queryOf(context);
          const answer = await request(app.server.url, "GET", `/features/evaluated?${query}`, { token: app.keys.production.publishableKey });
          expect(answer.status, query).toBe(200);
          const where = `context ${JSON.stringify(context)}\nrules ${JSON.stringify(rules.body.features)}`;
          for (const reference of REFERENCE_NAMES) {
            const expected = Object.fromEntries(evaluateWithReference(rules.body.features, context, {}, reference).map((item) => [item.key, JSON.parse(JSON.stringify(item))]));
            expect(answer.body.features, `${reference}: ${where}`).toEqual(expected);
          }
          const access = accessByDefinition(own, definitions, settings, context);
          for (const [key, item] of Object.entries(answer.body.features as Record<string, { isEnabled: boolean; config: { key: string | null; payload: unknown } }>)) {
            expect(item.isEnabled, `${key} by the definition of prerequisites: ${where}`).toBe(access.get(key));
          }
          if (sdkAccepts(context)) {
            const local = sdk!.getFlags({ ...(context as object), enableTracking: false });
            const shown = (flags: Record<string, { isEnabled: boolean; config: { key?: string | null; payload?: unknown } }>) =>
              Object.fromEntries(Object.entries(flags).map(([key, flag]) => [key, { isEnabled: flag.isEnabled, variant: flag.config?.key ?? null, payload: flag.config?.payload ?? null }]));
            expect(shown(local as never), `node SDK: ${where}`).toEqual(shown(answer.body.features));
            comparedWithSdk++;
          }
          if (withPrerequisites) comparedWithPrerequisites++;
          compared++;
        };
        for (let start = 0; start < contexts.length; start += CONCURRENCY) await Promise.all(contexts.slice(start, start + CONCURRENCY).map(compare));
      }
    } finally {
      quiet.mockRestore();
      sdk.destroy?.();
    }
    // The comparison only means something if most generated rulesets were storable.
    expect(storedRulesets).toBeGreaterThan(RULESETS / 2);
    // The generators draw lone surrogates as rule operands: the refusal above was exercised.
    expect(refusedForSurrogates).toBeGreaterThan(0);
    console.info(`http parity: ${compared} contexts, ${comparedWithSdk} also through the node SDK, ${comparedWithPrerequisites} with prerequisites`);
    expect(compared).toBe(storedRulesets * CONTEXTS_PER_RULESET);
    expect(comparedWithSdk).toBeGreaterThan(compared / 2);
    expect(comparedWithPrerequisites).toBeGreaterThan(compared / 4);
  });
});
