/**
 * The analytics answers computed the slow way, by reading every entry of the append logs. Not used by the service:
 * it is the reference the aggregates are tested against (src/analytics/*.test.ts) and the baseline they are
 * measured against (bench/analytics/summary-vs-scan.ts). It shares only the definitions (states, days) with them.
 */
import { displayName, type FeatureRecord } from "../../src/features/feature-records.js";
import { prefixRange, type KvStore } from "../../src/storage/kv.js";
import { readLog, type LogTable } from "../../src/tracking/append-log.js";
import type { EventRecord, FeatureEventRecord, FeedbackRecord } from "../../src/tracking/tracking-records.js";
import { isExposure } from "../../src/tracking/attribution.js";
import { dayOf } from "../../src/analytics/keys.js";
import type { CompanyStanding, FeatureSummary } from "../../src/analytics/queries.js";
import { adoptionState, NO_USAGE, satisfactionOf } from "../../src/analytics/states.js";
import type { AnalyticsWindow } from "../../src/analytics/window.js";

export interface ScanResult {
  summaries: FeatureSummary[];
  /** Per feature key, the standing of every company of the environment. */
  standings: Map<string, Map<string, CompanyStanding>>;
}

interface FeatureTally {
  usage: Map<string, { days: Set<number>; lastAt: number }>;
  scores: Map<string | null, { count: number; sum: number }>;
  exposed: Set<string>;
}

/** Every analytics answer for `features` over `window`, from one pass over each log. */
export function scanAnalytics(store: KvStore, environmentId: string, features: readonly FeatureRecord[], window: AnalyticsWindow, retentionDays: number): ScanResult {
  const inWindow = (at: number) => at >= window.from && at < window.to;
  const tallies = new Map<string, FeatureTally>();
  const byName = new Map<string, FeatureTally[]>();
  for (const feature of features) {
    const tally: FeatureTally = { usage: new Map(), scores: new Map(), exposed: new Set() };
    tallies.set(feature.key, tally);
    for (const name of new Set([feature.key, ...feature.usageEvents])) byName.set(name, [...(byName.get(name) ?? []), tally]);
  }
  eachRecord<EventRecord>(store, "events", environmentId, (event) => {
    const companyId = event.countsForCompanyId;
    if (companyId === null || !inWindow(event.timestamp)) return;
    for (const tally of byName.get(event.event) ?? []) {
      const usage = tally.usage.get(companyId);
      if (usage) {
        usage.days.add(dayOf(event.timestamp));
        usage.lastAt = Math.max(usage.lastAt, event.timestamp);
      } else tally.usage.set(companyId, { days: new Set([dayOf(event.timestamp)]), lastAt: event.timestamp });
    }
  });
  eachRecord<FeedbackRecord>(store, "feedback", environmentId, (feedback) => {
    const tally = tallies.get(feedback.key);
    if (!tally || feedback.score === null || !inWindow(feedback.timestamp)) return;
    const scores = tally.scores.get(feedback.countsForCompanyId) ?? { count: 0, sum: 0 };
    tally.scores.set(feedback.countsForCompanyId, { count: scores.count + 1, sum: scores.sum + feedback.score });
  });
  eachRecord<FeatureEventRecord>(store, "featureEvents", environmentId, (event) => {
    const tally = tallies.get(event.key);
    if (!tally || event.countsForCompanyId === null || !isExposure(event.action, event.evalResult) || !inWindow(event.receivedAt)) return;
    tally.exposed.add(event.countsForCompanyId);
  });

  const companyIds: string[] = [];
  for (const entry of store.table("companies").range(prefixRange(environmentId))) companyIds.push((entry.value as { id: string }).id);
  const summaries: FeatureSummary[] = [];
  const standings = new Map<string, Map<string, CompanyStanding>>();
  for (const feature of features) {
    const tally = tallies.get(feature.key)!;
    const counts = { none: 0, tried: 0, retained: 0, churned: 0, adopted: 0 };
    const perCompany = new Map<string, CompanyStanding>();
    for (const companyId of companyIds) {
      const used = tally.usage.get(companyId);
      const usage = used ? { usageDays: used.days.size, lastUsedAt: used.lastAt } : NO_USAGE;
      const state = adoptionState(usage, retentionDays, window);
      counts[state]++;
      const scores = tally.scores.get(companyId);
      perCompany.set(companyId, {
        state,
        usageDays: usage.usageDays,
        lastUsedAt: usage.lastUsedAt === null ? null : new Date(usage.lastUsedAt).toISOString(),
        satisfaction: satisfactionOf(scores?.count ?? 0, scores?.sum ?? 0),
      });
    }
    counts.adopted = counts.retained + counts.churned;
    let count = 0;
    let sum = 0;
    for (const scores of tally.scores.values()) {
      count += scores.count;
      sum += scores.sum;
    }
    summaries.push({ key: feature.key, name: displayName(feature), companies: counts, satisfaction: satisfactionOf(count, sum), exposure: { companies: tally.exposed.size } });
    standings.set(feature.key, perCompany);
  }
  return { summaries, standings };
}

function eachRecord<R>(store: KvStore, table: LogTable, environmentId: string, visit: (record: R) => void): void {
  for (let after = 0; ; ) {
    const entries = readLog<R>(store, table, environmentId, after, 10_000);
    for (const entry of entries) visit(entry.value);
    const last = entries.at(-1);
    if (!last) return;
    after = last.sequence;
  }
}
