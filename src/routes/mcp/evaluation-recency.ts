/**
 * When each feature key last had a feature event, per environment, kept in memory and topped up from the log's newer
 * entries. The dashboard's feature list and MCP's list_flags ask for it on every load; scanning a busy environment's
 * last 30 days afresh each time read up to MAX_EVENTS_SCANNED events per environment per page.
 */
import type { KvStore } from "../../storage/kv.js";
import { lastSequence, logEntries, logEntriesNewestFirst } from "../../tracking/append-log.js";
import type { FeatureEventRecord } from "../../tracking/tracking-records.js";

export interface RecencyLimits {
  /**
   * Most feature events read back by one fresh scan, and most new ones read by one top-up (past it the index is
   * dropped and scanned afresh). A scan cut short covers only what it read: flags not seen in it are then not called
   * unevaluated (a conservative answer, never a wrong "stale").
   */
  maxScanned: number;
  /** Most keys remembered per environment: tracked feature keys are client input, so memory stays bounded. */
  maxKeys: number;
}

export const DEFAULT_RECENCY_LIMITS: RecencyLimits = { maxScanned: 500_000, maxKeys: 100_000 };

interface EnvironmentRecency {
  /** Latest receivedAt per key. */
  lastAt: Map<string, number>;
  /** The log's sequence this index has read through. */
  through: number;
  /** Every event received at or after this time up to `through` was read. */
  coveredFrom: number;
}

/** Keys with a feature event since a time, and whether every event since then was read. */
export interface EvaluatedSince {
  keys: Set<string>;
  complete: boolean;
}

export class EvaluationRecency {
  private readonly environments = new Map<string, EnvironmentRecency>();

  constructor(
    private readonly store: KvStore,
    private readonly limits: RecencyLimits = DEFAULT_RECENCY_LIMITS,
  ) {}

  /** Keys of feature events received since `since` in one environment (as of the store's current snapshot). */
  evaluatedSince(environmentId: string, since: number): EvaluatedSince {
    const last = lastSequence(this.store, "featureEvents", environmentId);
    let recency = this.environments.get(environmentId);
    // A log that shrank (the environment was deleted and made again) or ran far ahead is read afresh.
    if (recency !== undefined && (last < recency.through || last - recency.through > this.limits.maxScanned)) recency = undefined;
    if (recency === undefined) recency = this.scan(environmentId, since, last);
    else if (last > recency.through) this.topUp(environmentId, recency, last);
    const keys = new Set<string>();
    for (const [key, at] of recency.lastAt) {
      if (at >= since) keys.add(key);
      // Older than any later question asks about: windows only move forward.
      else recency.lastAt.delete(key);
    }
    if (recency.lastAt.size > this.limits.maxKeys) this.environments.delete(environmentId);
    else this.environments.set(environmentId, recency);
    return { keys, complete: since >= recency.coveredFrom };
  }

  /** Reads the log newest first down to `since`, or until maxScanned events were read. */
  private scan(environmentId: string, since: number, through: number): EnvironmentRecency {
    const lastAt = new Map<string, number>();
    let scanned = 0;
    let oldestRead = Number.POSITIVE_INFINITY;
    let cut = false;
    for (const event of logEntriesNewestFirst<FeatureEventRecord>(this.store, "featureEvents", environmentId)) {
      if (event.receivedAt < since) break;
      if (scanned === this.limits.maxScanned) {
        cut = true;
        break;
      }
      scanned++;
      if (!lastAt.has(event.key)) lastAt.set(event.key, event.receivedAt);
      oldestRead = Math.min(oldestRead, event.receivedAt);
    }
    // Cut short, the scan covers what came after the oldest event it read (times follow append order closely):
    // later questions, whose windows start later, become complete once they start after it.
    return { lastAt, through, coveredFrom: cut ? oldestRead + 1 : since };
  }

  /** Reads the events appended since the index last looked. */
  private topUp(environmentId: string, recency: EnvironmentRecency, through: number): void {
    for (const { value } of logEntries<FeatureEventRecord>(this.store, "featureEvents", environmentId, recency.through, through - recency.through)) {
      const known = recency.lastAt.get(value.key);
      if (known === undefined || value.receivedAt > known) recency.lastAt.set(value.key, value.receivedAt);
    }
    recency.through = through;
  }
}
