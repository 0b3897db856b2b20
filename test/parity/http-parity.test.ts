/**
 * The parity property end to end: random rule trees stored through the management API, with random prerequisites
 * and kill switches (API.md §15), random contexts sent the way the browser SDK sends them (flattened, sorted,
 * URL-encoded `context.*` parameters), and every item of `/features/evaluated` compared with the reference evaluator
 * run on the rules `GET /features` hands out, with the official node SDK evaluating those rules locally, and with
 * what prerequisites mean (prerequisite-oracle.ts).
 */
import { Agent, get } from "node:http";
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
import { compileReference, evaluateReference, REFERENCE_NAMES } from "./reference.js";

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

/** Contexts compared over HTTP, at least (per twin): rulesets are taken in turn until this many were compared. */
const MIN_CONTEXTS = 100_000;
const CONTEXTS_PER_RULESET = 1_500;
/** Rulesets drawn; those the API refuses compare nothing, so there are more than MIN_CONTEXTS needs. */
const MAX_RULESETS = 150;
/** Requests in flight at once over kept-alive connections: the answers are compared as they come. */
const CONCURRENCY = 16;
const SEED = 20261122;

/** GET `path` over one of CONCURRENCY kept-alive connections; the status and the raw body. */
function getText(agent: Agent, baseUrl: string, path: string, token: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    get(baseUrl + path, { agent, headers: { authorization: `Bearer ${token}` } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    }).on("error", reject);
  });
}

/** Runs `work` over `items` with at most `limit` in flight, each lane taking the next item as it finishes one. */
async function inLanes<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

/** A features map with its keys sorted: two maps are equal exactly when these texts are (a fast path for toEqual). */
const sortedText = (features: Record<string, unknown>) => JSON.stringify(Object.fromEntries(Object.keys(features).sort().map((key) => [key, features[key]])));

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

  it(`answers like both references and the node SDK for at least ${MIN_CONTEXTS} random contexts over random rulesets`, { timeout: 900_000 }, async () => {
    const rulesets = fc.sample(featuresWithPrerequisites(), { numRuns: MAX_RULESETS, seed: SEED });
    let compared = 0;
    let comparedWithSdk = 0;
    let comparedWithPrerequisites = 0;
    let storedRulesets = 0;
    let tried = 0;
    let refusedForSurrogates = 0;
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    // A fresh client per ruleset: it fetches the rules at once (a refresh of one client waits out its 1 s throttle).
    const newSdk = async () => {
      const client = new ReflagClient({ secretKey: app.keys.production.secretKey, apiBaseUrl: app.server.url, offline: false, logger: quietLogger(), batchOptions: { flushOnExit: false }, flagsSyncMode: "polling" });
      await client.initialize();
      return client;
    };
    let sdk: ReflagClient | undefined;
    // The reference reports unparsable dates on console.error; the generated values include some on purpose.
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    const started = performance.now();
    try {
      for (const [index, { definitions, settings }] of rulesets.entries()) {
        if (compared >= MIN_CONTEXTS) break;
        tried++;
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
        // The references as the node SDK builds them: once per ruleset, from the rules GET /features served.
        const references = REFERENCE_NAMES.map((reference) => [reference, compileReference(rules.body.features, reference)] as const);
        const contexts = fc.sample(CONTEXT, { numRuns: CONTEXTS_PER_RULESET, seed: SEED + index });
        const compare = async (context: Record<string, unknown>) => {
          const query = queryOf(context);
          const reply = await getText(agent, app.server.url, `/features/evaluated?${query}`, app.keys.production.publishableKey);
          expect(reply.status, query).toBe(200);
          const features = (JSON.parse(reply.text) as { features: Record<string, { isEnabled: boolean; config: { key: string | null; payload: unknown } }> }).features;
          const answered = sortedText(features);
          const where = () => `context ${JSON.stringify(context)}\nrules ${JSON.stringify(rules.body.features)}`;
          // Deep equality runs only to describe a difference: equal sorted JSON texts mean equal maps.
          for (const [reference, compiled] of references) {
            const expected = Object.fromEntries(evaluateReference(compiled, context).map((item) => [item.key, item]));
            // JSON text leaves out undefined fields as the answer does; the parsed copy is for describing a difference.
            if (sortedText(expected) !== answered) expect(features, `${reference}: ${where()}`).toEqual(JSON.parse(JSON.stringify(expected)));
          }
          const access = accessByDefinition(own, definitions, settings, context);
          for (const [key, item] of Object.entries(features)) {
            if (item.isEnabled !== access.get(key)) expect(item.isEnabled, `${key} by the definition of prerequisites: ${where()}`).toBe(access.get(key));
          }
          if (sdkAccepts(context)) {
            const local = sdk!.getFlags({ ...(context as object), enableTracking: false });
            const shown = (flags: Record<string, { isEnabled: boolean; config: { key?: string | null; payload?: unknown } }>) =>
              Object.fromEntries(Object.entries(flags).map(([key, flag]) => [key, { isEnabled: flag.isEnabled, variant: flag.config?.key ?? null, payload: flag.config?.payload ?? null }]));
            const [sdkShown, answerShown] = [shown(local as never), shown(features)];
            if (sortedText(sdkShown) !== sortedText(answerShown)) expect(sdkShown, `node SDK: ${where()}`).toEqual(answerShown);
            comparedWithSdk++;
          }
          if (withPrerequisites) comparedWithPrerequisites++;
          compared++;
        };
        await inLanes(contexts, CONCURRENCY, compare);
      }
    } finally {
      quiet.mockRestore();
      sdk?.destroy?.();
      agent.destroy();
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.info(`http parity: ${compared} contexts over ${storedRulesets} stored rulesets in ${seconds} s, ${comparedWithSdk} also through the node SDK, ${comparedWithPrerequisites} with prerequisites`);
    expect(compared).toBeGreaterThanOrEqual(MIN_CONTEXTS);
    expect(compared).toBe(storedRulesets * CONTEXTS_PER_RULESET);
    // The comparison only means something if most generated rulesets were storable.
    expect(storedRulesets).toBeGreaterThan(tried / 2);
    // The generators draw lone surrogates as rule operands: the refusal above was exercised.
    expect(refusedForSurrogates).toBeGreaterThan(0);
    expect(comparedWithSdk).toBeGreaterThan(compared / 2);
    expect(comparedWithPrerequisites).toBeGreaterThan(compared / 4);
  });
});
