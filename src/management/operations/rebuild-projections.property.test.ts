/**
 * Log-first tracking's promise (API.md §4): what the projector derives from the tracking log, however the calls were
 * grouped into appends and however the projector's steps fell, equals a rebuild of the whole log — users, companies,
 * memberships, the event logs, feedback and analytics cells, entry for entry. Random call sequences go through the
 * service's own job path (validation, feedback ids decided at logging, one append per batch) on both stores.
 */
import { runProjectionStep } from "../../tracking/projector.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LogStore } from "../../../native-free/storage/log-store.js";
import { FeatureRepository } from "../../features/feature-repository.js";
import { createJobContext, type JobContext } from "../../serving/job-context.js";
import { TRACKING_PROJECTIONS } from "../../serving/tracking-projections.js";
import type { Job, TrackJob } from "../../serving/protocol.js";
import { runJobs } from "../../serving/run-job.js";
import type { TrackingCall } from "../../schemas/tracking.js";
import type { KvStore } from "../../storage/kv.js";
import { LmdbStore } from "../../storage/lmdb-store.js";
import { TenancyRepository } from "../../tenancy/tenancy-repository.js";
import { lastAppended, projectedUpTo } from "../../tracking/tracking-log-table.js";
import { rebuildProjections, verifyProjections } from "./rebuild-projections.js";

const RUNS = 100;
const USERS = ["u0", "u1", "u2", "u3"];
const COMPANIES = ["c0", "c1", "c2"];
const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);

const user = fc.constantFrom(...USERS);
const company = fc.constantFrom(...COMPANIES);
const time = fc.option(fc.integer({ min: T0, max: T0 + 5 * DAY }), { nil: undefined });
const active = fc.option(fc.boolean(), { nil: undefined });

const userBody = fc.record({ userId: user, attributes: fc.option(fc.dictionary(fc.constantFrom("plan", "seats"), fc.oneof(fc.string({ maxLength: 3 }), fc.integer())), { nil: undefined }), timestamp: time });
const companyBody = fc.record({ companyId: company, userId: fc.option(user, { nil: undefined }), attributes: fc.option(fc.record({ tier: fc.constantFrom("a", "b") }), { nil: undefined }), timestamp: time });
const eventBody = fc.record({ event: fc.constantFrom("f0", "f1", "used", "other"), userId: user, companyId: fc.option(company, { nil: undefined }), timestamp: time, active });
const featureEventBody = fc.record({ action: fc.constantFrom("evaluate", "check"), key: fc.constantFrom("f0", "f1"), evalResult: fc.boolean(), evalContext: fc.option(fc.oneof(user.map((id) => ({ user: { id } })), company.map((id) => ({ company: { id } }))), { nil: undefined }) });
const feedbackBody = fc.record({ userId: user, key: fc.constantFrom("f0", "f1"), score: fc.integer({ min: 1, max: 5 }), companyId: fc.option(company, { nil: undefined }), timestamp: time });

type Call =
  | { call: Exclude<TrackingCall, "feedback" | "bulk">; body: unknown }
  | { call: "bulk"; body: unknown[] }
  | { call: "feedback"; body: Record<string, unknown>; update: number | undefined }
  | { call: "enabled"; userId: string; companyId: string | undefined };

const call: fc.Arbitrary<Call> = fc.oneof(
  userBody.map((body) => ({ call: "user" as const, body })),
  companyBody.map((body) => ({ call: "company" as const, body })),
  eventBody.map((body) => ({ call: "event" as const, body })),
  featureEventBody.map((body) => ({ call: "feature-events" as const, body })),
  fc.tuple(feedbackBody, fc.option(fc.nat(), { nil: undefined })).map(([body, update]) => ({ call: "feedback" as const, body, update })),
  fc
    .array(fc.oneof(userBody.map((body) => ({ type: "user", ...body })), companyBody.map((body) => ({ type: "company", ...body })), eventBody.map((body) => ({ type: "event", ...body }))), { minLength: 1, maxLength: 6 })
    .map((body) => ({ call: "bulk" as const, body })),
  fc.record({ userId: user, companyId: fc.option(company, { nil: undefined }) }).map((context) => ({ call: "enabled" as const, ...context })),
);

/** A run: batches of calls (each batch one append, as a worker's batch is), and after each a projection step of some size. */
const run = fc.array(fc.record({ calls: fc.array(call, { minLength: 1, maxLength: 5 }), stepItems: fc.integer({ min: 1, max: 12 }) }), { minLength: 1, maxLength: 8 });

async function withStore(kind: "lmdb" | "log", body: (store: KvStore) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), `switchyard-rebuild-${kind}-`));
  const store: KvStore = kind === "lmdb" ? new LmdbStore({ path: dir, durability: "commit" }) : await LogStore.open({ path: dir, durability: "commit" });
  try {
    await body(store);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function jobOf(environmentId: string, entry: Call, feedbackIds: string[]): Job {
  if (entry.call === "enabled") {
    const query = `context.user.id=${entry.userId}${entry.companyId ? `&context.company.id=${entry.companyId}` : ""}`;
    return { kind: "evaluate", environmentId, minFlagStateVersion: 0, query, onlyEnabled: true, attributeEpoch: 0, attributeCacheMs: 0 };
  }
  let body: unknown = entry.body;
  if (entry.call === "feedback" && entry.update !== undefined && feedbackIds.length > 0) body = { ...entry.body, feedbackId: feedbackIds[entry.update % feedbackIds.length] };
  const job: TrackJob = { kind: "track", environmentId, call: entry.call, body: Buffer.from(JSON.stringify(body)), contentType: "application/json", receivedAt: T0 + 6 * DAY };
  return job;
}

async function playRun(context: JobContext, environmentId: string, batches: { calls: Call[]; stepItems: number }[]): Promise<void> {
  const feedbackIds: string[] = [];
  const fault = (error: unknown) => {
    throw error;
  };
  for (const batch of batches) {
    const answers = await runJobs(context, batch.calls.map((entry) => jobOf(environmentId, entry, feedbackIds)), fault);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      const text = typeof answer.body === "string" ? answer.body : "";
      const id = text.includes("feedbackId") ? (JSON.parse(text) as { feedbackId?: string }).feedbackId : undefined;
      if (id !== undefined && !feedbackIds.includes(id)) feedbackIds.push(id);
    }
    // Evaluate-only appends are held (not awaited): in the log once flushed, as the service's reads wait for them.
    await context.heldEvents.flush();
    await runProjectionStep(context.store, batch.stepItems, fault, context.projections);
  }
}

describe.each(["lmdb", "log"] as const)("projection equals a rebuild from the tracking log (%s store)", (kind) => {
  it(
    "for random call sequences, appends and projection steps",
    async () => {
      await fc.assert(
        fc.asyncProperty(run, async (batches) => {
          await withStore(kind, async (store) => {
            const tenancy = new TenancyRepository(store);
            const issued = await tenancy.createApp("Rebuild");
            const environmentId = issued.environments[0]!.id;
            const features = new FeatureRepository(store);
            await features.putFeature(issued.app.id, "f0", { usageEvents: ["used"] });
            await features.putFeature(issued.app.id, "f1", {});
            await features.putRules(environmentId, "f0", "targeting", [{ filter: { type: "constant", value: true } }]);
            const context = createJobContext(store);
            await playRun(context, environmentId, batches);
            // Partly projected here; verify projects the rest first, as the service would, then compares.
            const report = await verifyProjections(store, TRACKING_PROJECTIONS);
            expect(report.differences).toEqual([]);
            expect(report.equal).toBe(true);
            expect(projectedUpTo(store)).toBe(lastAppended(store));
            // A rebuild in place leaves the same state (verify again finds nothing to change).
            await rebuildProjections(store, TRACKING_PROJECTIONS);
            expect((await verifyProjections(store, TRACKING_PROJECTIONS)).equal).toBe(true);
          });
        }),
        { numRuns: RUNS },
      );
    },
    240_000,
  );
});

describe("the check can fail", () => {
  it("finds a projected record that the log does not explain", async () => {
    await withStore("lmdb", async (store) => {
      const issued = await new TenancyRepository(store).createApp("Tampered");
      const environmentId = issued.environments[0]!.id;
      const context = createJobContext(store);
      await playRun(context, environmentId, [{ calls: [{ call: "user", body: { userId: "u0", attributes: { plan: "pro" } } }], stepItems: 10 }]);
      expect((await verifyProjections(store, TRACKING_PROJECTIONS)).equal).toBe(true);
      await store.write(() => store.table("users").put(`${environmentId}\u0000ghost`, { id: "ghost", attributes: {}, firstSeen: 1, lastSeen: 1, lastCompanyId: null, lastCompanyAt: null }));
      const report = await verifyProjections(store, TRACKING_PROJECTIONS);
      expect(report.equal).toBe(false);
      expect(report.differences).toEqual([{ part: "users", stored: 2, rebuilt: 1 }]);
      // Verify changed nothing: the ghost is still there until a rebuild.
      expect(store.table("users").get(`${environmentId}\u0000ghost`)).toBeDefined();
      await rebuildProjections(store, TRACKING_PROJECTIONS);
      expect(store.table("users").get(`${environmentId}\u0000ghost`)).toBeUndefined();
    });
  });
});
