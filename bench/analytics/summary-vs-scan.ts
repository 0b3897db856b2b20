/**
 * The analytics features summary read from the aggregates against the same answer computed by a full scan of the
 * append logs (src/analytics/log-scan.ts), on one store seeded with 1,000,000 events from 10,000 companies over 60
 * days, in one run. Also reports what seeding cost (ingestion with aggregate upkeep) and one rebuild.
 *
 * Events come in sessions, as product usage does: a user of a company uses one feature for a while and sends a
 * burst of events of one name (mean 8). `--sparse` makes every event its own session instead — the worst case for
 * aggregates, where nearly every event is a cell of its own.
 *
 *   node dist/bench/analytics/summary-vs-scan.js [--quick] [--sparse]     (--quick: 100,000 events)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { AnalyticsQueries } from "../../src/analytics/queries.js";
import { rebuildAggregates } from "../../src/analytics/rebuild.js";
import { scanAnalytics } from "../support/log-scan.js";
import { DAY_MS } from "../../src/analytics/keys.js";
import { windowOfDays } from "../../src/analytics/window.js";
import { FeatureRepository } from "../../src/features/feature-repository.js";
import type { TrackingItem } from "../../src/schemas/tracking.js";
import { LmdbStore } from "../../src/storage/lmdb-store.js";
import { TenancyRepository } from "../../src/tenancy/tenancy-repository.js";
import { seededRandom } from "../support/seeded-random.js";
import { applyTracking } from "../support/direct-tracking.js";

// Analytics and survey state derive from tracking only where they are registered, as every serving thread does.

export interface SummaryVsScanOptions {
  events: number;
  companies: number;
  /** Mean events per session (1: every event on its own). */
  meanBurst: number;
  /** Timed repetitions of each query (the median is reported). */
  repetitions: number;
}

export interface SummaryVsScanFigures {
  events: number;
  companies: number;
  meanBurst: number;
  features: number;
  feedback: number;
  featureEvents: number;
  windowDays: number;
  /** Seeding through applyTracking in 5,000-item requests, aggregates maintained in each transaction. */
  ingestMs: number;
  ingestItemsPerSecond: number;
  summaryMs: number;
  scanMs: number;
  speedup: number;
  rebuildMs: number;
  aggregateEntries: number;
  /** The two answers agree (a benchmark of a wrong answer would be worthless). */
  identical: boolean;
}

const HISTORY_DAYS = 60;
const WINDOW_DAYS = 30;
const FEATURES = 20;
const EVENT_NAMES = 30;
const USERS_PER_COMPANY = 5;
const BATCH = 5_000;
const LAST_DAY = 19_800; // 2024-03-18

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function timed<T>(run: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = run();
  return { value, ms: performance.now() - start };
}

/** Seeds the history through the real write path; answers how many items went in and how long it took. */
async function seed(store: LmdbStore, environmentId: string, options: SummaryVsScanOptions): Promise<{ items: number; feedback: number; featureEvents: number; ms: number }> {
  // Seeded, so every run builds the same history.
  const next = seededRandom(9);
  const companyName = (index: number) => `company-${String(index).padStart(5, "0")}`;
  // Skewed activity: a few companies are busy, most are quiet, some never show up in the window.
  const pickCompany = () => companyName(Math.floor(options.companies * next() ** 2));
  const timeOf = () => (LAST_DAY - Math.floor(next() * HISTORY_DAYS)) * DAY_MS + Math.floor(next() * DAY_MS);
  let items: TrackingItem[] = [];
  let total = 0;
  let feedback = 0;
  let featureEvents = 0;
  const flush = async () => {
    if (items.length === 0) return;
    await applyTracking(store, environmentId, items, LAST_DAY * DAY_MS);
    total += items.length;
    items = [];
  };
  const start = performance.now();
  for (let index = 0; index < options.companies; index++) {
    items.push({ type: "company", companyId: companyName(index), userId: undefined, attributes: { plan: "pro" }, timestamp: LAST_DAY * DAY_MS, active: true });
    if (items.length >= BATCH) await flush();
  }
  let sent = 0;
  while (sent < options.events) {
    // One session: a user of a company sends a burst of one event name on one day, a minute or so apart.
    const companyId = pickCompany();
    const userId = `${companyId}-user-${Math.floor(next() * USERS_PER_COMPANY)}`;
    const event = next() < 0.5 ? `feature-${Math.floor(next() * FEATURES)}` : `event-${Math.floor(next() * EVENT_NAMES)}`;
    const burst = options.meanBurst <= 1 ? 1 : 1 + Math.floor(-Math.log(1 - next()) * (options.meanBurst - 1));
    const day = LAST_DAY - Math.floor(next() * HISTORY_DAYS);
    let at = day * DAY_MS + Math.floor(next() * (DAY_MS - 2 * 60 * 60_000));
    for (let index = 0; index < burst && sent < options.events; index++, sent++) {
      items.push({ type: "event", event, userId, companyId, attributes: undefined, timestamp: at, active: true });
      at += Math.floor(next() * 120_000);
      if (sent % 100 === 0) {
        feedback++;
        items.push({
          type: "feedback",
          feedbackId: undefined,
          userId,
          companyId,
          featureId: undefined,
          key: `feature-${Math.floor(next() * FEATURES)}`,
          score: 1 + Math.floor(next() * 5),
          comment: undefined,
          question: undefined,
          promptedQuestion: undefined,
          promptId: undefined,
          source: undefined,
          timestamp: timeOf(),
        });
      }
      if (sent % 10 === 0) {
        featureEvents++;
        items.push({
          type: "feature-flag-event",
          action: "check",
          key: `feature-${Math.floor(next() * FEATURES)}`,
          targetingVersion: 1,
          evalContext: { company: { id: companyId }, user: { id: userId } },
          evalResult: next() < 0.7,
          evalRuleResults: undefined,
          evalMissingFields: undefined,
        });
      }
      if (items.length >= BATCH) await flush();
    }
  }
  await flush();
  return { items: total, feedback, featureEvents, ms: performance.now() - start };
}

export async function benchSummaryVsScan(options: SummaryVsScanOptions): Promise<SummaryVsScanFigures> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-bench-analytics-"));
  const store = new LmdbStore({ path: dir, durability: "commit" });
  try {
    const issued = await new TenancyRepository(store).createApp("Analytics bench");
    const appId = issued.app.id;
    const environmentId = issued.app.defaultEnvironmentId;
    const repository = new FeatureRepository(store);
    // Feature i is used through event `feature-i` and one or two event names that other features share.
    for (let index = 0; index < FEATURES; index++) {
      const usageEvents = [`event-${index % EVENT_NAMES}`, ...(index % 3 === 0 ? [`event-${(index * 7) % EVENT_NAMES}`] : [])];
      await repository.putFeature(appId, `feature-${index}`, { usageEvents });
    }
    const features = repository.listFeatures(appId);
    const seeded = await seed(store, environmentId, options);

    const window = windowOfDays(LAST_DAY + 1 - WINDOW_DAYS, LAST_DAY + 1);
    const queries = new AnalyticsQueries(store);
    const summaryRuns = Array.from({ length: options.repetitions }, () => timed(() => queries.featureSummaries(environmentId, features, window, 2)));
    const scanRuns = Array.from({ length: options.repetitions }, () => timed(() => scanAnalytics(store, environmentId, features, window, 2)));
    const rebuildStart = performance.now();
    const rebuilt = await rebuildAggregates(store, environmentId);
    const rebuildMs = performance.now() - rebuildStart;
    const summaryMs = median(summaryRuns.map((run) => run.ms));
    const scanMs = median(scanRuns.map((run) => run.ms));
    return {
      events: options.events,
      companies: options.companies,
      meanBurst: options.meanBurst,
      features: features.length,
      feedback: seeded.feedback,
      featureEvents: seeded.featureEvents,
      windowDays: WINDOW_DAYS,
      ingestMs: Math.round(seeded.ms),
      ingestItemsPerSecond: Math.round(seeded.items / (seeded.ms / 1000)),
      summaryMs: round(summaryMs),
      scanMs: round(scanMs),
      speedup: round(scanMs / summaryMs),
      rebuildMs: Math.round(rebuildMs),
      aggregateEntries: rebuilt.aggregates,
      identical: isDeepStrictEqual(summaryRuns[0]!.value, scanRuns[0]!.value.summaries),
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const round = (value: number) => Math.round(value * 10) / 10;

function parseArgs(argv: readonly string[]): SummaryVsScanOptions {
  const quick = argv.includes("--quick");
  return { events: quick ? 100_000 : 1_000_000, companies: 10_000, meanBurst: argv.includes("--sparse") ? 1 : 8, repetitions: quick ? 5 : 3 };
}

const USAGE = `node dist/bench/analytics/summary-vs-scan.js [--quick] [--sparse]

The analytics features summary read from the aggregates against the same answer from a full scan of the logs, on a
store seeded with 1,000,000 events from 10,000 companies over 60 days (--quick: 100,000 events). Also what seeding
and one rebuild cost. --sparse: every event its own session (the worst case for aggregates). Prints JSON.
`;

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (process.argv.includes("--help") || process.argv.includes("-h")) process.stdout.write(USAGE);
  else {
    const figures = await benchSummaryVsScan(parseArgs(process.argv.slice(2)));
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  }
}
