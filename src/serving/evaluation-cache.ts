import { setBounded } from "../caching/set-bounded.js";

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
  body: string;
  headers: Record<string, string>;
}

interface Entry {
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

export class EvaluationCache {
  private readonly entries = new Map<string, Entry>();
  /**
   * Queries computed once recently. An answer is kept only when its query comes again: keeping every one-off answer
   * (a context with a request id, say) costs more in memory churn than the hits it would ever earn.
   */
  private readonly seenOnce = new Map<string, number>();
  private readonly attributeEpochs = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: EvaluationCacheOptions) {
    this.now = options.now ?? Date.now;
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
    const cacheKey = `${environmentId}?${query}`;
    const entry = this.entries.get(cacheKey);
    if (!entry) return undefined;
    const now = this.now();
    if (entry.flagStateVersion !== flagStateVersion || entry.attributeEpoch !== this.attributeEpoch(environmentId) || entry.expiresAt <= now) {
      this.entries.delete(cacheKey);
      // A query that earned an entry has shown it comes again: its next answer is kept at once.
      setBounded(this.seenOnce, cacheKey, now + this.options.ttlMs, this.options.maxEntries);
      return undefined;
    }
    return entry.answer;
  }

  /** Keeps an answer computed under the given version and epoch (both read before the work started). */
  put(environmentId: string, query: string, flagStateVersion: number, attributeEpoch: number, answer: ComputedAnswer): void {
    if (this.options.ttlMs <= 0 || answer.status !== 200 || answer.body.length > this.options.maxAnswerBytes) return;
    const cacheKey = `${environmentId}?${query}`;
    const now = this.now();
    const seenUntil = this.seenOnce.get(cacheKey);
    if (seenUntil === undefined || seenUntil <= now) {
      setBounded(this.seenOnce, cacheKey, now + this.options.ttlMs, this.options.maxEntries);
      return;
    }
    this.seenOnce.delete(cacheKey);
    const cached: CachedAnswer = { status: answer.status, headers: answer.headers, body: Buffer.from(answer.body) };
    setBounded(this.entries, cacheKey, { answer: cached, flagStateVersion, attributeEpoch, expiresAt: now + this.options.ttlMs }, this.options.maxEntries);
  }
}
