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
    if (
      entry.flagStateVersion !== flagStateVersion ||
      entry.attributeEpoch !== this.attributeEpoch(environmentId) ||
      entry.expiresAt <= this.now()
    ) {
      this.entries.delete(cacheKey);
      return undefined;
    }
    return entry.answer;
  }

  /** Keeps an answer computed under the given version and epoch (both read before the work started). */
  put(environmentId: string, query: string, flagStateVersion: number, attributeEpoch: number, answer: CachedAnswer): void {
    if (this.options.maxEntries === 0 || answer.status !== 200 || answer.body.length > this.options.maxAnswerBytes) return;
    const cacheKey = `${environmentId}?${query}`;
    this.entries.delete(cacheKey);
    if (this.entries.size >= this.options.maxEntries) {
      // Oldest first: a Map iterates in insertion order.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(cacheKey, { answer, flagStateVersion, attributeEpoch, expiresAt: this.now() + this.options.ttlMs });
  }
}
