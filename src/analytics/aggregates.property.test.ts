/**
 * Incremental aggregates against the append logs, for random tracking streams on a real LmdbStore:
 * 1. what ingestion maintained equals what `rebuildAggregates` recomputes from the logs, entry for entry;
 * 2. every analytics answer read from the aggregates equals the one a full scan of the logs gives (log-scan.ts).
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { useTempLmdbStore } from "../../test/support/temp-lmdb.js";
import { FeatureRepository } from "../features/feature-repository.js";
import type { FeatureRecord } from "../features/feature-records.js";
import type { FeatureEventAction } from "../schemas/tracking-fields.js";
import type { TrackingItem } from "../schemas/tracking.js";
import { prefixRange, type KvEntry, type KvStore } from "../storage/kv.js";
import { LmdbStore } from "../storage/lmdb-store.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { applyTracking, recordEvaluations } from "../../bench/support/direct-tracking.js";
import { DAY_MS } from "./keys.js";
import { scanAnalytics } from "../../bench/support/log-scan.js";
import { AnalyticsQueries } from "./queries.js";
import { rebuildAggregates } from "./rebuild.js";
import { windowOfDays } from "./window.js";

// Analytics and survey state derive from tracking only where they are registered, as every serving thread does.

const DAY0 = 19_700; // 2023-12-09
const DAYS = 12;
const FEATURE_KEYS = ["f0", "f1", "f2"] as const;
const EVENT_NAMES = ["f0", "f1", "f2", "e1", "e2", "other"] as const;
const USERS = ["u0", "u1", "u2", "u3", "u4"] as const;
const COMPANIES = ["c0", "c1", "c2", "c3"] as const;

/** Each run commits up to 14 transactions; on a loaded machine 100 runs take a few seconds to a minute. */
const RUNS = 100;
const TIMEOUT_MS = 180_000;

let store: KvStore;
const temp = useTempLmdbStore("switchyard-analytics-", "all");
let appId: string;
let features: FeatureRecord[];

beforeAll(async () => {
  store = temp.store;
  appId = (await new TenancyRepository(store).createApp("Analytics")).app.id;
  const repository = new FeatureRepository(store);
  await repository.putFeature(appId, "f0", { usageEvents: ["e1"] });
  await repository.putFeature(appId, "f1", { usageEvents: ["e1", "e2", "f1"] });
  await repository.putFeature(appId, "f2", {});
  features = repository.listFeatures(appId);
});

// ---------------------------------------------------------------------------------------------------------------
// Streams: batches of operations, each batch one tracking request.

const time = fc.integer({ min: DAY0 * DAY_MS, max: (DAY0 + DAYS) * DAY_MS - 1 });
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const user = fc.constantFrom(...USERS);
const company = fc.constantFrom(...COMPANIES);

type Operation =
  | { op: "company"; companyId: string; userId: string | undefined; timestamp: number | undefined }
  | { op: "event"; event: string; userId: string; companyId: string | undefined; timestamp: number | undefined }
  | { op: "feedback"; userId: string; key: string; companyId: string | undefined; score: number | undefined; timestamp: number | undefined }
  | { op: "update"; pick: number; userId: string | undefined; companyId: string | undefined; score: number | undefined; timestamp: number | undefined }
  | { op: "feature-event"; action: FeatureEventAction; key: string; result: boolean; context: Record<string, unknown> | undefined }
  | { op: "evaluations"; results: { key: string; result: boolean }[]; context: Record<string, unknown> | undefined };

const evalContext = fc.oneof(
  fc.constant(undefined),
  company.map((id) => ({ company: { id } })),
  company.map((id) => ({ "company.id": id })),
  user.map((id) => ({ user: { id } })),
  user.map((id) => ({ "user.id": id, other: 1 })),
  fc.constant({ company: { id: "" }, user: { id: "u0" } }),
);

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ op: fc.constant("company" as const), companyId: company, userId: optional(user), timestamp: optional(time) }),
  { arbitrary: fc.record({ op: fc.constant("event" as const), event: fc.constantFrom(...EVENT_NAMES), userId: user, companyId: optional(company), timestamp: optional(time) }), weight: 4 },
  fc.record({
    op: fc.constant("feedback" as const),
    userId: user,
    key: fc.constantFrom(...FEATURE_KEYS),
    companyId: optional(company),
    score: optional(fc.integer({ min: 1, max: 5 })),
    timestamp: optional(time),
  }),
  fc.record({
    op: fc.constant("update" as const),
    pick: fc.nat(),
    userId: optional(user),
    companyId: optional(company),
    score: optional(fc.integer({ min: 1, max: 5 })),
    timestamp: optional(time),
  }),
  fc.record({
    op: fc.constant("feature-event" as const),
    action: fc.constantFrom<FeatureEventAction>("evaluate", "check", "check-is-enabled"),
    key: fc.constantFrom(...FEATURE_KEYS),
    result: fc.boolean(),
    context: evalContext,
  }),
  // `/features/enabled`: several evaluate events of one context, stored as one group of log entries.
  fc.record({
    op: fc.constant("evaluations" as const),
    results: fc.array(fc.record({ key: fc.constantFrom(...FEATURE_KEYS), result: fc.boolean() }), { minLength: 1, maxLength: 3 }),
    context: evalContext,
  }),
);

const stream = fc.array(fc.record({ receivedAt: time, operations: fc.array(operation, { minLength: 1, maxLength: 6 }) }), { minLength: 1, maxLength: 14 });

interface Created {
  feedbackId: string;
  userId: string;
  key: string;
}

/** A batch's items; updates name feedback created by earlier batches (or are dropped while there is none). */
function itemsOf(operations: readonly Operation[], created: readonly Created[]): { items: TrackingItem[]; newFeedback: { userId: string; key: string }[] } {
  const items: TrackingItem[] = [];
  // Grouped evaluations are written after the batch's items, as a request of their own.
  const newFeedback: { userId: string; key: string }[] = [];
  for (const operation of operations) {
    switch (operation.op) {
      case "company":
        items.push({ type: "company", companyId: operation.companyId, userId: operation.userId, attributes: undefined, timestamp: operation.timestamp, active: true });
        break;
      case "event":
        items.push({ type: "event", event: operation.event, userId: operation.userId, companyId: operation.companyId, attributes: undefined, timestamp: operation.timestamp, active: true });
        break;
      case "feedback":
      case "update": {
        const target = operation.op === "update" ? created[operation.pick % Math.max(created.length, 1)] : undefined;
        if (operation.op === "update" && !target) break;
        const userId = operation.userId ?? target?.userId ?? "u0";
        const key = operation.op === "feedback" ? operation.key : target!.key;
        items.push({
          type: "feedback",
          feedbackId: target?.feedbackId,
          userId,
          companyId: operation.companyId,
          featureId: undefined,
          key,
          score: operation.score,
          // A feedback needs a score or a comment; a comment-only one counts nowhere until an update scores it.
          comment: operation.score === undefined ? "words" : undefined,
          question: undefined,
          promptedQuestion: undefined,
          promptId: undefined,
          source: undefined,
          timestamp: operation.timestamp,
        });
        if (!target) newFeedback.push({ userId, key });
        break;
      }
      case "evaluations":
        break;
      case "feature-event":
        items.push({
          type: "feature-flag-event",
          action: operation.action,
          key: operation.key,
          targetingVersion: undefined,
          evalContext: operation.context,
          evalResult: operation.result,
          evalRuleResults: undefined,
          evalMissingFields: undefined,
        });
        break;
    }
  }
  return { items, newFeedback };
}

let environments = 0;

async function freshEnvironment(): Promise<string> {
  const environment = await new TenancyRepository(store).createEnvironment(appId, `run-${environments++}`);
  return environment!.id;
}

async function ingest(environmentId: string, batches: fc.RecordValue<{ receivedAt: number; operations: Operation[] }>[]): Promise<void> {
  const created: Created[] = [];
  for (const batch of batches) {
    const { items, newFeedback } = itemsOf(batch.operations, created);
    for (const operation of batch.operations) {
      if (operation.op !== "evaluations") continue;
      const results = operation.results.map(({ key, result }) => ({ key, targetingVersion: 1, evalResult: result, evalRuleResults: [result], evalMissingFields: [] }));
      const rows = results.map((result) => [result.key, result.targetingVersion, result.evalResult, result.evalRuleResults, result.evalMissingFields]);
      await recordEvaluations(store, environmentId, { action: "evaluate", evalContext: operation.context ?? null, results, rows }, batch.receivedAt);
    }
    if (items.length === 0) continue;
    const { feedbackIds } = await applyTracking(store, environmentId, items, batch.receivedAt);
    // feedbackIds lists every feedback item in order, updates included; new ones are those without a feedbackId.
    const feedbackItems = items.filter((item) => item.type === "feedback");
    let fresh = 0;
    feedbackItems.forEach((item, index) => {
      if (item.feedbackId === undefined) created.push({ feedbackId: feedbackIds[index]!, ...newFeedback[fresh++]! });
    });
  }
}

function aggregatesOf(environmentId: string): KvEntry<unknown>[] {
  return [...store.table("aggregates").range(prefixRange(environmentId))];
}

describe("analytics aggregates", () => {
  it("are what a rebuild from the logs produces", async () => {
    await fc.assert(
      fc.asyncProperty(stream, async (batches) => {
        const environmentId = await freshEnvironment();
        await ingest(environmentId, batches);
        const incremental = aggregatesOf(environmentId);
        await rebuildAggregates(store, environmentId);
        expect(aggregatesOf(environmentId)).toEqual(incremental);
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT_MS);

  it("answer every query as a full scan of the logs does", async () => {
    const window = fc
      .tuple(fc.integer({ min: DAY0 - 2, max: DAY0 + DAYS + 1 }), fc.integer({ min: 1, max: DAYS + 3 }))
      .map(([fromDay, length]) => windowOfDays(fromDay, fromDay + length));
    await fc.assert(
      fc.asyncProperty(stream, window, fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 3 }), async (batches, analyticsWindow, retentionDays, pageSize) => {
        const environmentId = await freshEnvironment();
        await ingest(environmentId, batches);
        const queries = new AnalyticsQueries(store);
        const expected = scanAnalytics(store, environmentId, features, analyticsWindow, retentionDays);
        expect(queries.featureSummaries(environmentId, features, analyticsWindow, retentionDays)).toEqual(expected.summaries);
        for (const feature of features) {
          const rows = [];
          let after: string | undefined;
          for (;;) {
            const page = queries.featureCompanies(environmentId, feature, analyticsWindow, retentionDays, after, pageSize);
            rows.push(...page.companies);
            if (page.next === null) break;
            after = page.next;
          }
          const standings = expected.standings.get(feature.key)!;
          expect(rows).toEqual([...standings].map(([companyId, standing]) => ({ companyId, ...standing })));
        }
        for (const companyId of expected.standings.get("f0")!.keys()) {
          expect(queries.companyFeatures(environmentId, companyId, features, analyticsWindow, retentionDays)).toEqual(
            features.map((feature) => ({ key: feature.key, name: feature.name ?? feature.key, ...expected.standings.get(feature.key)!.get(companyId)! })),
          );
        }
      }),
      { numRuns: RUNS },
    );
  }, TIMEOUT_MS);
});
