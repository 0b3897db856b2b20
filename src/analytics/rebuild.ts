import type { KvStore } from "../storage/kv.js";
import { logEntries, type LogTable } from "../tracking/append-log.js";
import type { EventRecord, FeatureEventRecord, FeedbackRecord, UserRecord } from "../tracking/tracking-records.js";
import { userKey } from "../tracking/users-companies.js";
import { AggregateWriter } from "./aggregate-writer.js";
import { featureEventCompany } from "../tracking/attribution.js";
import { aggregateRanges } from "./keys.js";

/** What a rebuild read and wrote. */
export interface RebuildReport {
  events: number;
  featureEvents: number;
  feedback: number;
  /** Aggregate entries written. */
  aggregates: number;
}


/**
 * Recomputes an environment's aggregates from its append logs (events, feature events, feedback) and replaces the
 * stored ones — the same result incremental maintenance reaches, which the property test holds it to. Runs in one
 * write transaction so that nothing appended meanwhile is counted twice or missed; ingestion waits for it, so its
 * cost (one pass over the logs) is paid as a pause in writes.
 */
export async function rebuildAggregates(store: KvStore, environmentId: string): Promise<RebuildReport> {
  return store.write(() => rebuildAggregatesNow(store, environmentId));
}

/** Inside a write: the rebuild itself (the management apply path runs it in the change's transaction). */
export function rebuildAggregatesNow(store: KvStore, environmentId: string): RebuildReport {
  const aggregates = store.table("aggregates");
  for (const range of aggregateRanges(environmentId)) {
    const stale = Array.from(aggregates.range(range), (entry) => entry.key);
    for (const staleKey of stale) aggregates.remove(staleKey);
  }
  const writer = new AggregateWriter(store, environmentId, { rebuilding: true });
  const users = store.table("users");
  // Only for records written before attribution was stored on them: the user's company now is the best left.
  const latestCompanyOf = (userId: string): string | null => users.get(userKey(environmentId, userId))?.lastCompanyId ?? null;
  const report: RebuildReport = { events: 0, featureEvents: 0, feedback: 0, aggregates: 0 };
  report.events = eachLogEntry<EventRecord>(store, "events", environmentId, (record) => writer.event(record));
  report.featureEvents = eachLogEntry<FeatureEventRecord>(store, "featureEvents", environmentId, (record) =>
    writer.featureEvent({
      ...record,
      countsForCompanyId: storedAttribution(record, () => featureEventCompany(record.evalContext, latestCompanyOf)),
    }),
  );
  report.feedback = eachLogEntry<FeedbackRecord>(store, "feedback", environmentId, (record) =>
    writer.feedback({
      ...record,
      countsForCompanyId: storedAttribution(record, () => record.companyId ?? latestCompanyOf(record.userId)),
    }),
  );
  report.aggregates = writer.flush();
  return report;
}

/** A record's `countsForCompanyId` (null included: "no company"); `resolve()` for one stored before the field existed. */
function storedAttribution(record: { countsForCompanyId?: string | null }, resolve: () => string | null): string | null {
  return record.countsForCompanyId === undefined ? resolve() : record.countsForCompanyId;
}

function eachLogEntry<R>(store: KvStore, table: LogTable, environmentId: string, visit: (record: R) => void): number {
  let count = 0;
  // Lazily, one record decoded at a time: feature events may each be up to 2 MiB.
  for (const entry of logEntries<R>(store, table, environmentId, 0, Number.POSITIVE_INFINITY)) {
    visit(entry.value);
    count++;
  }
  return count;
}
