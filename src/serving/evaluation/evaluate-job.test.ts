/**
 * The flat evaluation path (flat query, flat remote context, answer writer) against the nested one it shortcuts:
 * random rulesets, random stored users and companies, and random query strings — encoded or not, with conflicting,
 * aliased, refused and oddly escaped parameters — must give the same answer or the same error.
 */
import { runProjectionStep } from "../../tracking/projector.js";
import { join } from "node:path";
import fc from "fast-check";
import { beforeAll, expect, it } from "vitest";
import { useTempLmdbStore } from "../../../test/support/temp-lmdb.js";
import { contextValue, featureDefinitions, stringAtom } from "../../../test/parity/arbitraries.js";
import { FeatureRepository } from "../../features/feature-repository.js";
import { LmdbStore } from "../../storage/lmdb-store.js";
import { TenancyRepository } from "../../tenancy/tenancy-repository.js";
import type { EvaluateJob } from "../protocol.js";
import { evaluateJob, evaluateNested, type Evaluation } from "./evaluate-job.js";
import { createJobContext, type JobContext } from "../job-context.js";
import { runJobs } from "../run-job.js";

let store: LmdbStore;
const temp = useTempLmdbStore("switchyard-flat-", "all");
let context: JobContext;

beforeAll(async () => {
  store = temp.store;
  context = createJobContext(store);
});

const NAMES = [
  "context.user.id", "context.user.id", "context.company.id", "context.company.id", "context.user.name", "context.user.tags.0",
  "context.user.tags", "context.user", "context.company", "context.company.plan", "context.company.createdAt",
  "context.company.seats", "context.other.flag", "context.otherContext.flag", "context.otherContext", "context.other.nested.deep",
  "context.plan", "context.a.b", "context.0", "context.user..id", "context..x", "context.", "context.user.",
  "context.user.__proto__.x", "context.user.constructor", "context%2Euser.email", "context.user.email", "key", "key",
  "publishableKey", "bucket-sdk-version", "context.ключ.ünï", "context.user.tags.1.x",
] as const;

const ID_VALUES = ["u1", "u2", "c1", "c2", "", "missing"] as const;

/** A query parameter, its value encoded the way an SDK does, raw, or with "+" and escapes URLSearchParams treats specially. */
const param = fc
  .tuple(fc.constantFrom(...NAMES), fc.oneof(fc.constantFrom(...ID_VALUES), stringAtom, fc.constantFrom("huddle", "42", "a.b")), fc.constantFrom("encoded", "encoded", "raw", "plus", "bad"))
  .map(([name, value, style]) => {
    const encoded = percentEncode(value);
    const text = style === "encoded" ? encoded : style === "raw" ? value.replaceAll("&", "").replaceAll("#", "") : style === "plus" ? encoded.replaceAll("%20", "+") : `${encoded}%zz%FF`;
    return `${name}=${text}`;
  });

/** encodeURIComponent, or the bytes Node writes for a string it refuses (lone surrogates become U+FFFD). */
function percentEncode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return [...Buffer.from(value)].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join("");
  }
}

/** Most queries name a stored user and company, as SDKs do; the rest of the parameters are random. */
const query = fc
  .tuple(fc.constantFrom("u1", "u2", "", "nobody"), fc.constantFrom("c1", "c2", "", "none"), fc.array(param, { maxLength: 6 }), fc.boolean())
  .map(([user, company, params, named]) => [...(named ? [`context.user.id=${user}`, `context.company.id=${company}`] : []), ...params].join("&"));

/** Mostly attributes the flat path takes; some with keys ("a.b", "") that only the nested merge can settle. */
const attributes = fc.oneof(
  { weight: 3, arbitrary: fc.dictionary(fc.constantFrom("name", "plan", "tags", "seats", "createdAt", "email", "nested", "id"), fc.oneof(stringAtom, contextValue(2)), { maxKeys: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom("name", "plan", "a.b", "", "nested"), contextValue(2), { maxKeys: 5 }) },
);

const RUNS = 400;
const QUERIES = 10;

type Outcome = { status: number; body: string; events: unknown } | { code: string };

function outcome(run: () => Evaluation): Outcome {
  try {
    const { answer, featureEvents } = run();
    return { status: answer.status, body: typeof answer.body === "string" ? answer.body : Buffer.from(answer.body).toString(), events: featureEvents };
  } catch (error) {
    return { code: (error as { code?: string }).code ?? String(error) };
  }
}

it("answers every query exactly as the nested path does", async () => {
  const tenancy = new TenancyRepository(store);
  const features = new FeatureRepository(store);
  let flatAnswers = 0;
  let flatRemote = 0;
  await fc.assert(
    fc.asyncProperty(
      featureDefinitions(),
      fc.tuple(attributes, attributes, attributes, attributes, attributes, attributes),
      fc.array(query, { minLength: QUERIES, maxLength: QUERIES }),
      async (definitions, [user1, user2, company1, company2, user1Later, company1Later], queries) => {
        const issued = await tenancy.createApp("Flat");
        const environmentId = issued.environments[0]!.id;
        for (const definition of definitions) {
          await features.putFeature(issued.app.id, definition.key, { stage: definition.stage, optInEnabled: definition.key === "export" });
          await features.putRules(environmentId, definition.key, "targeting", definition.targeting.rules);
          await features.putRules(environmentId, definition.key, "config", definition.config.variants);
        }
        const track = (call: "user" | "company", body: unknown) => ({
          kind: "track" as const,
          environmentId,
          call,
          body: Buffer.from(JSON.stringify(body)),
          contentType: "application/json",
          receivedAt: Date.UTC(2024, 0, 1),
        });
        // Attributes tracking refuses (a "__proto__" key, say) are simply not stored.
        await runJobs(context, [track("user", { userId: "u1", attributes: user1 }), track("user", { userId: "u2", attributes: user2 }),
          track("company", { companyId: "c1", attributes: company1 }), track("company", { companyId: "c2", attributes: company2 })], () => undefined);
        // Logged; stored users and companies are what the projector derives from the log.
        await runProjectionStep(context.store, 10_000, () => undefined, context.projections);
        // Later calls merge into what is stored, in a step of their own: the flat form kept beside each record must
        // follow (or stay, when they send nothing new).
        await runJobs(context, [track("user", { userId: "u1", attributes: user1Later }), track("company", { companyId: "c1", attributes: company1Later }),
          track("user", { userId: "u2", attributes: user2 })], () => undefined);
        await runProjectionStep(context.store, 10_000, () => undefined, context.projections);
        const version = tenancy.getEnvironment(environmentId)!.flagStateVersion;
        for (const [index, text] of queries.entries()) {
          // Every other query as `/features/enabled`, whose evaluate events must match too.
          const job: EvaluateJob = { kind: "evaluate", environmentId, minFlagStateVersion: version, query: text, onlyEnabled: index % 2 === 1, attributeEpoch: 0, attributeCacheMs: 0 };
          const actual = outcome(() => evaluateJob(context, job));
          const current = context.rulesets.get(environmentId, version)!;
          const expected = outcome(() => evaluateNested(context, job, current));
          expect(actual, text).toEqual(expected);
          if ("body" in actual && typeof evaluateJob(context, job).answer.body !== "string") {
            flatAnswers++;
            if (actual.body.includes('"remoteContextUsed":true')) flatRemote++;
          }
        }
      },
    ),
    { numRuns: RUNS },
  );
  console.info(`flat path: ${flatAnswers} of ${RUNS * QUERIES} answers, ${flatRemote} with remote context`);
  // The flat path must have answered a good share, remote context included, or the comparison proves little.
  expect(flatAnswers).toBeGreaterThan(RUNS * QUERIES * 0.3);
  expect(flatRemote).toBeGreaterThan(RUNS * QUERIES * 0.1);
}, 120_000);
