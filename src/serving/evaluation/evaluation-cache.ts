import { BoundedMap } from "../../storage/bounded-map.js";
import { HitRateGate } from "../../storage/hit-rate-gate.js";

/**
 * A hit saves a whole evaluation; a miss costs two lookups and an insert, tens of times less. So the cache pays from
 * a few hits in a hundred, and is skipped below that (traffic of contexts that do not come back) (docs/BENCHMARKS.md, "Figures behind the code").
 */
const BREAK_EVEN_HIT_RATE = 0.02;

/**
 * Answers of `GET /features/evaluated`, remembered per (environment, raw query). An answer depends on the rules
 * (flagStateVersion), on the stored attributes of the context's user and company (remote context), on opt-ins
 * (which bump flagStateVersion) and, for date operators, on the clock. So an entry is used only while the
 * environment's flagStateVersion and its attribute epoch — bumped by every `/user`, `/company` and `/bulk` call this
 * process handles — are the ones it was computed under, and for at most `ttlMs`, which bounds how long a change
 * made by another process sharing the data dir (or a date boundary) can go unseen.
 */
export interface CachedAnswer {
  status: number;
  /** UTF-8 bytes: encoded once here instead of by the front end on every hit. */
  body: Buffer;
  headers: Record<string, string>;
}

/** An answer as the executor produced it. */
export interface ComputedAnswer {
  status: number;
  body: string | Uint8Array;
  headers: Record<string, string>;
}

interface Entry {
  environmentId: string;
  answer: CachedAnswer;
  flagStateVersion: number;
  attributeEpoch: number;
  expiresAt: number;
}

export interface EvaluationCacheOptions {
  maxEntries: number;
  /** Answers larger than this are not kept (a large ruleset's answers would crowd out everything else). */
  maxAnswerBytes: number;
  ttlMs: number;
  now?: () => number;
}

/**
 * Entries are keyed by the raw query alone, the very string the front end produced, so a lookup and the put that
 * follows it hash the query once (V8 keeps a string's hash) and build no key string. An entry remembers its
 * environment: the same query under another environment's key (header-authenticated calls) is a miss there.
 */
export class EvaluationCache {
  /**
   * Queries computed once recently. An answer is kept only when its query comes again: keeping every one-off answer
   * (a context with a request id, say) costs more in memory churn than the hits it would ever earn.
   */
  private seenOnce: BoundedMap<string, number>;
  private entries: BoundedMap<string, Entry>;
  private readonly attributeEpochs = new Map<string, number>();
  private readonly now: () => number;
  /**
   * Judged on repeats (a hit, or a query computed once recently), not on hits alone: after the cache was emptied, a
   * query earns an entry on its second computation and hits on its third, so a window of hits alone would read as
   * zero while the traffic repeats, and the gate would never reopen for users who come back in turn
   * (docs/BENCHMARKS.md, "Figures behind the code"). A window of 4,096 lookups sees a reuse distance of thousands. Short
   * bypasses (1 to 4 windows): a wrong bypass costs a whole evaluation per missed hit.
   */
  private readonly gate = new HitRateGate(BREAK_EVEN_HIT_RATE, 4 * 1_024, 4 * 1_024, 16 * 1_024);

  constructor(private readonly options: EvaluationCacheOptions) {
    this.now = options.now ?? Date.now;
    this.entries = new BoundedMap(options.maxEntries);
    this.seenOnce = new BoundedMap(options.maxEntries);
  }

  /**
   * Whether this request should consult the cache at all (get, then put what it computes). False while the recent
   * hit rate is below break-even; the cache then samples again after a while.
   */
  consult(): boolean {
    return this.options.ttlMs > 0 && this.gate.open();
  }

  /** The epoch of stored user and company attributes of an environment, as this process knows it. */
  attributeEpoch(environmentId: string): number {
    return this.attributeEpochs.get(environmentId) ?? 0;
  }

  /** Called when a tracking call that may change stored attributes has been handled. */
  attributesChanged(environmentId: string): void {
    this.attributeEpochs.set(environmentId, this.attributeEpoch(environmentId) + 1);
  }

  get(environmentId: string, query: string, flagStateVersion: number): CachedAnswer | undefined {
    const answer = this.find(environmentId, query, flagStateVersion);
    const repeat = answer !== undefined || (this.seenOnce.get(query) ?? 0) > this.now();
    if (this.gate.record(repeat)) {
      // Closed: what is held would only go stale before the next sample.
      this.entries = new BoundedMap(this.options.maxEntries);
      this.seenOnce = new BoundedMap(this.options.maxEntries);
    }
    return answer;
  }

  private find(environmentId: string, query: string, flagStateVersion: number): CachedAnswer | undefined {
    const entry = this.entries.get(query);
    if (!entry || entry.environmentId !== environmentId) return undefined;
    const now = this.now();
    if (entry.flagStateVersion !== flagStateVersion || entry.attributeEpoch !== this.attributeEpoch(environmentId) || entry.expiresAt <= now) {
      this.entries.delete(query);
      // A query that earned an entry has shown it comes again: its next answer is kept at once.
      this.seenOnce.set(query, now + this.options.ttlMs);
      return undefined;
    }
    return entry.answer;
  }

  /** Keeps an answer computed under the given version and epoch (both read before the work started). */
  put(environmentId: string, query: string, flagStateVersion: number, attributeEpoch: number, answer: ComputedAnswer): void {
    if (this.options.ttlMs <= 0 || answer.status !== 200 || answer.body.length > this.options.maxAnswerBytes) return;
    const now = this.now();
    const seenUntil = this.seenOnce.get(query);
    if (seenUntil === undefined || seenUntil <= now) {
      this.seenOnce.set(query, now + this.options.ttlMs);
      return;
    }
    this.seenOnce.delete(query);
    const cached: CachedAnswer = { status: answer.status, headers: answer.headers, body: Buffer.from(answer.body) };
    this.entries.set(query, { environmentId, answer: cached, flagStateVersion, attributeEpoch, expiresAt: now + this.options.ttlMs });
  }
}
