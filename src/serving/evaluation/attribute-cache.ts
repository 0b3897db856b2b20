import { BoundedMap } from "../../storage/bounded-map.js";
import { HitRateGate } from "../../storage/hit-rate-gate.js";

/**
 * A hit saves a store read, its decoding and flattening; a miss costs the key, two lookups and an insert, several
 * times less: below about one hit in five (users that do not come back within the TTL) the cache is skipped
 * (docs/BENCHMARKS.md, "Figures behind the code").
 */
const BREAK_EVEN_HIT_RATE = 0.2;

interface Entry<V> {
  attributes: V | null;
  attributeEpoch: number;
  expiresAt: number;
}

/**
 * Stored user and company attributes as a worker last read them, for remote context. An entry is reused only under
 * the attribute epoch it was read at — the main thread bumps it after every `/user`, `/company` and `/bulk` call of
 * the environment — and for at most the TTL, which bounds how long another process's writes go unseen. Absence is
 * remembered too: most contexts name users nothing was tracked for.
 */
export class AttributeCache<V = unknown> {
  private entries: BoundedMap<string, Entry<V>>;
  private readonly gate = new HitRateGate(BREAK_EVEN_HIT_RATE);

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new BoundedMap(maxEntries);
  }

  /** Whether to use the cache for this lookup (get, then set on a miss); false while it rarely hits. */
  consult(): boolean {
    return this.gate.open();
  }

  /** The remembered attributes (null: known absent), or undefined when they must be read. */
  get(cacheKey: string, attributeEpoch: number): V | null | undefined {
    const attributes = this.find(cacheKey, attributeEpoch);
    if (this.gate.record(attributes !== undefined)) this.entries = new BoundedMap(this.maxEntries);
    return attributes;
  }

  private find(cacheKey: string, attributeEpoch: number): V | null | undefined {
    const entry = this.entries.get(cacheKey);
    if (!entry) return undefined;
    if (entry.attributeEpoch !== attributeEpoch || entry.expiresAt <= this.now()) {
      this.entries.delete(cacheKey);
      return undefined;
    }
    return entry.attributes;
  }

  set(cacheKey: string, attributeEpoch: number, ttlMs: number, attributes: V | null): void {
    if (ttlMs <= 0) return;
    this.entries.set(cacheKey, { attributes, attributeEpoch, expiresAt: this.now() + ttlMs });
  }
}
