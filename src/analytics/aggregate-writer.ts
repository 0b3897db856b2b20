import { BoundedMap } from "../storage/bounded-map.js";
import type { KvStore, KvTable } from "../storage/kv.js";
import type { EventRecord, FeatureEventRecord, FeedbackRecord } from "../tracking/tracking-records.js";
import { isExposure } from "../tracking/attribution.js";
import {
  cellKey,
  dayOf,
  feedbackContributionKey,
  isAggregatableName,
  NO_COMPANY,
  type ExposureCell,
  type FeedbackContribution,
  type SatisfactionCell,
  type UsageCell,
  type UserUsageCell,
  userUsageKey,
} from "./keys.js";

/** What the writer needs of each record; the full records fit. */
export type UsageInput = Pick<EventRecord, "event" | "countsForCompanyId" | "timestamp" | "userId">;
export type ExposureInput = Pick<FeatureEventRecord, "action" | "key" | "evalResult" | "countsForCompanyId" | "receivedAt">;
export type SatisfactionInput = Pick<FeedbackRecord, "feedbackId" | "key" | "countsForCompanyId" | "score" | "timestamp">;

/** A value to remove rather than put. */
const REMOVED = Symbol("removed");

/**
 * Exposure cells this thread has read back as committed, per store. They are never removed while their log entries
 * exist (a rebuild writes them again), so an event for one of them needs neither a read nor a write. Only cells read
 * from the store enter: one set by a transaction that then rolled back must not be taken for present.
 */
const committedExposures = new WeakMap<KvStore, KnownExposures>();

/**
 * Forgets which exposure cells this process took for present: after a projection rebuild removed them, or after a
 * transaction that read cells written earlier in itself rolled back (src/management/operations/rebuild-projections.ts).
 */
export function forgetKnownExposures(store: KvStore): void {
  committedExposures.delete(store);
}

/**
 * Committed exposure cells by environment and day, then company, then feature: looked up with the parts as they come,
 * so that a known cell costs no key string (building and hashing one cost more than the rest of the check).
 */
class KnownExposures {
  private readonly byDay = new BoundedMap<string, BoundedMap<string, Set<string>>>(64);
  /**
   * The last environment and day looked up, with its companies: a projection step's check events nearly all share
   * them, and building and hashing the day's key string for each one was a tenth of the projector's time under
   * `/features/enabled` load. A cached map stays valid after the bounded map drops it: what it holds is still true.
   */
  private last: { environmentId: string; day: number; companies: BoundedMap<string, Set<string>> } | undefined;

  has(environmentId: string, day: number, companyId: string, featureKey: string): boolean {
    return this.companiesOf(environmentId, day, false)?.get(companyId)?.has(featureKey) === true;
  }

  add(environmentId: string, day: number, companyId: string, featureKey: string): void {
    const companies = this.companiesOf(environmentId, day, true)!;
    let features = companies.get(companyId);
    if (features === undefined) companies.set(companyId, (features = new Set()));
    features.add(featureKey);
  }

  private companiesOf(environmentId: string, day: number, create: boolean): BoundedMap<string, Set<string>> | undefined {
    const last = this.last;
    if (last !== undefined && last.day === day && last.environmentId === environmentId) return last.companies;
    const dayKey = `${environmentId}\u0000${day}`;
    let companies = this.byDay.get(dayKey);
    if (companies === undefined && create) this.byDay.set(dayKey, (companies = new BoundedMap(COMPANIES_KEPT_PER_DAY)));
    if (companies !== undefined) this.last = { environmentId, day, companies };
    return companies;
  }
}

const COMPANIES_KEPT_PER_DAY = 20_000;

/**
 * Keeps one environment's aggregates (see `keys.ts`) in step with what a tracking transaction appends. Used inside
 * `KvStore.write`, by ingestion (one writer per request) and by the rebuild (one writer for the whole log), so the
 * two cannot disagree on arithmetic. Cells touched are cached and written once by `flush()`: a bulk of events from
 * one company on one day costs one read and one write, not one per event.
 */
export class AggregateWriter {
  private readonly table: KvTable<unknown>;
  private readonly pending = new Map<string, unknown>();
  /** Undefined for a rebuild, which removes every cell first and must write each again. */
  private readonly knownExposures: KnownExposures | undefined;

  constructor(
    store: KvStore,
    private readonly environmentId: string,
    options: { rebuilding?: boolean } = {},
  ) {
    this.table = store.table("aggregates");
    if (options.rebuilding === true) this.knownExposures = undefined;
    else {
      let known = committedExposures.get(store);
      if (known === undefined) committedExposures.set(store, (known = new KnownExposures()));
      this.knownExposures = known;
    }
  }

  /** An appended event: one more event on its day for the company it counts for (none → not aggregated). */
  event(record: UsageInput): void {
    if (!isAggregatableName(record.event)) return;
    const at = record.timestamp;
    // Per user, company or not: feedback surveys ask users after N uses or D days since their first use.
    if (isAggregatableName(record.userId)) {
      const userKey = userUsageKey(this.environmentId, record.userId, record.event);
      const mine = this.get<UserUsageCell>(userKey);
      this.set(userKey, mine ? [mine[0] + 1, Math.min(mine[1], at)] : [1, at]);
    }
    if (record.countsForCompanyId === null) return;
    const cellKeyText = cellKey(this.environmentId, "u", record.event, dayOf(at), record.countsForCompanyId);
    const cell = this.get<UsageCell>(cellKeyText);
    this.set(cellKeyText, cell ? [cell[0] + 1, Math.max(cell[1], at)] : [1, at]);
  }

  /** An appended feature event: marks exposure on the day it was received when it is a true evaluate/check. */
  featureEvent(record: ExposureInput): void {
    if (record.countsForCompanyId === null || !isExposure(record.action, record.evalResult)) return;
    const day = dayOf(record.receivedAt);
    const companyId = record.countsForCompanyId;
    if (this.knownExposures?.has(this.environmentId, day, companyId, record.key) === true) return;
    const cellKeyText = cellKey(this.environmentId, "x", record.key, day, companyId);
    if (this.pending.has(cellKeyText)) return;
    if (this.table.get(cellKeyText) !== undefined) {
      this.knownExposures?.add(this.environmentId, day, companyId, record.key);
      return;
    }
    const marker: ExposureCell = 1;
    this.set(cellKeyText, marker);
  }

  /**
   * A feedback as it now stands (created or updated): whatever it contributed before is taken back and its latest
   * score added, so each feedback counts once, on the day of its (latest) timestamp, for its (latest) company.
   */
  feedback(record: SatisfactionInput): void {
    const contributionKey = feedbackContributionKey(this.environmentId, record.feedbackId);
    const previous = this.get<FeedbackContribution>(contributionKey);
    if (previous) this.addScore(previous, -1);
    const next: FeedbackContribution = {
      key: record.key,
      companyId: record.countsForCompanyId,
      day: dayOf(record.timestamp),
      score: record.score,
    };
    this.set(contributionKey, next);
    this.addScore(next, 1);
  }

  /** Writes every changed cell; call once, at the end of the transaction. Answers how many entries it put. */
  flush(): number {
    let written = 0;
    for (const [cellKeyText, value] of this.pending) {
      if (value === REMOVED) this.table.remove(cellKeyText);
      else {
        this.table.put(cellKeyText, value);
        written++;
      }
    }
    this.pending.clear();
    return written;
  }

  private addScore(contribution: FeedbackContribution, sign: 1 | -1): void {
    if (contribution.score === null) return;
    const cellKeyText = cellKey(this.environmentId, "s", contribution.key, contribution.day, contribution.companyId ?? NO_COMPANY);
    const cell = this.get<SatisfactionCell>(cellKeyText);
    const count = (cell?.[0] ?? 0) + sign;
    const sum = (cell?.[1] ?? 0) + sign * contribution.score;
    // A cell exists only while it counts something: a rebuild never writes an empty one.
    this.setOrRemove(cellKeyText, count > 0 ? [count, sum] : undefined);
  }

  private get<V>(cellKeyText: string): V | undefined {
    if (this.pending.has(cellKeyText)) {
      const value = this.pending.get(cellKeyText);
      return value === REMOVED ? undefined : (value as V);
    }
    return this.table.get(cellKeyText) as V | undefined;
  }

  private set(cellKeyText: string, value: unknown): void {
    this.pending.set(cellKeyText, value);
  }

  private setOrRemove(cellKeyText: string, value: unknown): void {
    this.pending.set(cellKeyText, value === undefined ? REMOVED : value);
  }
}
