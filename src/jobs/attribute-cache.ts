import { setBounded } from "../caching/set-bounded.js";
import type { Attributes } from "../schemas/tracking.js";

interface Entry {
  attributes: Attributes | null;
  attributeEpoch: number;
  expiresAt: number;
}

/**
 * Stored user and company attributes as a worker last read them, for remote context. An entry is reused only under
 * the attribute epoch it was read at — the main thread bumps it after every `/user`, `/company` and `/bulk` call of
 * the environment — and for at most the TTL, which bounds how long another process's writes go unseen. Absence is
 * remembered too: most contexts name users nothing was tracked for.
 */
export class AttributeCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The remembered attributes (null: known absent), or undefined when they must be read. */
  get(cacheKey: string, attributeEpoch: number): Attributes | null | undefined {
    const entry = this.entries.get(cacheKey);
    if (!entry) return undefined;
    if (entry.attributeEpoch !== attributeEpoch || entry.expiresAt <= this.now()) {
      this.entries.delete(cacheKey);
      return undefined;
    }
    return entry.attributes;
  }

  set(cacheKey: string, attributeEpoch: number, ttlMs: number, attributes: Attributes | null): void {
    if (ttlMs <= 0) return;
    setBounded(this.entries, cacheKey, { attributes, attributeEpoch, expiresAt: this.now() + ttlMs }, this.maxEntries);
  }
}
