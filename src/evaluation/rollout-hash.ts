/** The percentage-rollout hash of the reference evaluator, and a bounded cache of its results. */
import { hash } from "node:crypto";
import { HitRateGate } from "../caching/hit-rate-gate.js";
import { RolloutHasher } from "./rollout-hasher.js";

const LOW_20_BITS = 0xfffff;

/** The scale of rollout thresholds: 100000 is 100 %. */
export const ROLLOUT_SCALE = 100_000;

/**
 * The rollout bucket (0..100000) of a hash input `<filter key>.<attribute value>`: SHA-256 of its UTF-8 bytes, the
 * first four bytes as a little-endian uint32, its low 20 bits scaled to 0..100000. A filter is on iff
 * bucket < threshold.
 */
export function rolloutBucket(hashInput: string): number {
  // One-shot crypto.hash (Node ≥ 20.12) skips the Hash object createHash allocates, and a "binary" (latin1) digest (one char per
  // byte) costs a third of a Buffer one (bench/evaluation/rollout-hash.ts): hashing dominates evaluation.
  const data = SURROGATE.test(hashInput) ? encodeLikeJsSha256(hashInput) : hashInput;
  const digest = hash("sha256", data, "binary");
  // The low 20 bits of the first four bytes read as a little-endian uint32: bytes 0, 1 and the low nibble of byte 2.
  const low20 = digest.charCodeAt(0) | (digest.charCodeAt(1) << 8) | ((digest.charCodeAt(2) & 0x0f) << 16);
  return Math.floor((low20 / LOW_20_BITS) * ROLLOUT_SCALE);
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The bytes the reference's js-sha256 hashes for a string holding surrogates. It joins every surrogate with the code
 * unit after it, paired or not (a lone one at the end with 0), where Node would write U+FFFD for a lone one. For
 * well-formed strings both give plain UTF-8, so this slow path only runs when a surrogate is present.
 */
export function encodeLikeJsSha256(text: string): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    let code = text.charCodeAt(index);
    if (code < 0x80) {
      bytes.push(code);
    } else if (code < 0x800) {
      bytes.push(0xc0 | (code >>> 6), 0x80 | (code & 0x3f));
    } else if (code < 0xd800 || code >= 0xe000) {
      bytes.push(0xe0 | (code >>> 12), 0x80 | ((code >>> 6) & 0x3f), 0x80 | (code & 0x3f));
    } else {
      // charCodeAt past the end is NaN, and NaN & 0x3ff is 0, as in js-sha256.
      code = 0x10000 + (((code & 0x3ff) << 10) | (text.charCodeAt(++index) & 0x3ff));
      bytes.push(0xf0 | (code >>> 18), 0x80 | ((code >>> 12) & 0x3f));
      bytes.push(0x80 | ((code >>> 6) & 0x3f), 0x80 | (code & 0x3f));
    }
  }
  return Buffer.from(bytes);
}

/**
 * Remembers the rollout buckets of one rollout key by attribute value, within a bound. Two generations: when the
 * current one fills up it becomes the previous one and the older is dropped, so recently used values survive a
 * turnover (an LRU approximation that costs no bookkeeping per hit).
 *
 * Keyed by the attribute value alone, not by `<key>.<value>`: a hit then needs no string concatenation, and the
 * value's hash is usually already cached in the string.
 *
 * A miss costs nearly what the hash does (two lookups and an insert, and the garbage of dropped generations), so a
 * key whose values rarely come back — a rollout on user ids under real traffic — would pay twice: a HitRateGate
 * bypasses the cache for such keys.
 */
export class RolloutBucketCache {
  /** Measured: a hit saves ~250 ns of hashing, a miss adds ~200 ns, so caching pays from about half hits. */
  static readonly BREAK_EVEN = 0.5;

  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  readonly hasher: RolloutHasher;
  private gate!: HitRateGate;
  #generationSize = 0;

  constructor(
    /** `<rollout key>.`, the part of the hash input before the value; "" to key by whole hash inputs. */
    prefix = "",
    generationSize = 10_000,
  ) {
    this.hasher = new RolloutHasher(prefix);
    this.generationSize = generationSize;
  }

  get generationSize(): number {
    return this.#generationSize;
  }

  /**
   * Sizes the generations, and the gate's sample window with them: a value can only hit when it comes back within
   * what the cache holds (up to two generations), so a window of four generations sees every reuse the cache can
   * serve. A fixed 4,096-lookup window kept the 700 user-id rollouts of a 1,000-feature ruleset sampling — inserting,
   * hashing one lane at a time — for their first 4,096 requests each (7 s at 565 requests/s).
   */
  set generationSize(size: number) {
    this.#generationSize = size;
    const sample = Math.min(4 * 1_024, Math.max(64, 4 * size));
    this.gate = new HitRateGate(RolloutBucketCache.BREAK_EVEN, sample, 4 * sample);
  }

  /**
   * Another cache whose verdict this one takes instead of sampling for itself (see RolloutCaches.sizeGenerations):
   * rollouts on the same field see the same values, so one sample tells for all of them.
   */
  private leader: RolloutBucketCache | undefined;
  /** Lookups made following the leader since the last check that the leader is consulted too, and its count then. */
  private followedLookups = 0;
  private leaderLookupsAtCheck = 0;

  follow(leader: RolloutBucketCache): void {
    if (leader === this) return;
    this.leader = leader;
    this.followedLookups = 0;
    this.leaderLookupsAtCheck = leader.gate.lookups;
  }

  /** Following a leader that has not found caching worth it (or not judged yet): hash, keep nothing. */
  private followsBypass(): boolean {
    if (this.leader === undefined || this.leader.gate.lastWindowPassed === true) return false;
    if (this.current.size > 0 || this.previous.size > 0) {
      this.current = new Map();
      this.previous = new Map();
    }
    return true;
  }

  /**
   * Counts a lookup made on the leader's verdict. A leader reached far less often than this cache (a rollout behind a
   * condition few contexts meet) judges too rarely to speak for it: the cache then samples for itself.
   */
  private followedLookup(): void {
    const windowLookups = 4 * this.#generationSize;
    if (++this.followedLookups < windowLookups) return;
    const leaderLookups = this.leader!.gate.lookups;
    if (leaderLookups - this.leaderLookupsAtCheck < this.followedLookups / 4) this.leader = undefined;
    this.followedLookups = 0;
    this.leaderLookupsAtCheck = leaderLookups;
  }

  bucket(value: string): number {
    if (this.followsBypass()) {
      this.followedLookup();
      return this.hasher.bucket(value);
    }
    if (!this.gate.open()) return this.hasher.bucket(value);
    let hit = true;
    let bucket = this.current.get(value);
    if (bucket === undefined) {
      bucket = this.previous.get(value);
      if (bucket === undefined) {
        bucket = this.hasher.bucket(value);
        hit = false;
      }
      if (this.current.size >= this.generationSize) {
        this.previous = this.current;
        this.current = new Map();
      }
      this.current.set(value, bucket);
    }
    if (this.gate.record(hit)) {
      // Nothing is kept while bypassing: what the next sample finds is reuse within that sample alone.
      this.current = new Map();
      this.previous = new Map();
    }
    return bucket;
  }

  /** Whether the cache is only hashing now (its values did not come back often enough); for tests and metrics. */
  get bypassing(): boolean {
    return this.followsBypass() || this.gate.bypassing;
  }

  /** Counts a bucket computed elsewhere while bypassing (a batched hash), so that sampling resumes on time. */
  countBypassed(): void {
    if (this.followsBypass()) this.followedLookup();
    else this.gate.open();
  }

  /** Whether the bucket of `value` is held, without touching the cache; for tests. */
  has(value: string): boolean {
    return this.current.has(value) || this.previous.has(value);
  }

  /** Entries held, for tests and metrics; at most twice the generation size. */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}

/** A rollout key and the context field whose value it hashes. */
export interface RolloutSlot {
  readonly fieldId: number;
  readonly cache: RolloutBucketCache;
  /** Whether a batched hash may compute this slot's bucket before a filter asks for it (see rollout-slots.ts). */
  speculate: boolean;
  /** Evaluations that read this slot's bucket since the last judgement. */
  reads: number;
}

/**
 * The bucket caches of one ruleset, one per rollout key, so that the filters sharing a key (the same hash inputs)
 * share entries. The ruleset's entry budget is split evenly between its keys once compilation is done.
 */
export class RolloutCaches {
  /** Entries per generation for the whole ruleset; each key gets a share, within the bounds below. */
  static readonly GENERATION_BUDGET = 65_536;
  static readonly MIN_PER_KEY = 256;
  static readonly MAX_PER_KEY = 16_384;

  private readonly byKey = new Map<string, RolloutBucketCache>();
  private readonly slotIds = new Map<string, number>();
  /** Every (rollout key, attribute field) a filter of the ruleset reads, in the order compilation met them. */
  readonly slots: RolloutSlot[] = [];

  /** The slot of a rollout on `rolloutKey` by the field `fieldId`: one bucket per evaluation, whichever filter asks. */
  slotFor(rolloutKey: string, fieldId: number): number {
    const name = `${rolloutKey}\u0000${fieldId}`;
    let slot = this.slotIds.get(name);
    if (slot === undefined) {
      slot = this.slots.length;
      this.slots.push({ fieldId, cache: this.for(rolloutKey), speculate: true, reads: 0 });
      this.slotIds.set(name, slot);
    }
    return slot;
  }

  for(rolloutKey: string): RolloutBucketCache {
    let cache = this.byKey.get(rolloutKey);
    if (cache === undefined) {
      cache = new RolloutBucketCache(`${rolloutKey}.`);
      this.byKey.set(rolloutKey, cache);
    }
    return cache;
  }

  /**
   * Sizes every key's generations now that the number of keys is known, and lets the first rollout on each field
   * judge for the others on that field. Each key sampling for itself cost every key's inserts and one-lane hashes in
   * every sample window: at 1,000 features, about a tenth of the worker's time in the first minutes.
   */
  sizeGenerations(): void {
    const share = Math.floor(RolloutCaches.GENERATION_BUDGET / Math.max(1, this.byKey.size));
    const perKey = Math.min(RolloutCaches.MAX_PER_KEY, Math.max(RolloutCaches.MIN_PER_KEY, share));
    for (const cache of this.byKey.values()) cache.generationSize = perKey;
    const leaders = new Map<number, RolloutBucketCache>();
    const placed = new Set<RolloutBucketCache>();
    for (const { fieldId, cache } of this.slots) {
      // A key read through two fields follows the first of them.
      if (placed.has(cache)) continue;
      placed.add(cache);
      const leader = leaders.get(fieldId);
      if (leader === undefined) leaders.set(fieldId, cache);
      else cache.follow(leader);
    }
  }

  get keyCount(): number {
    return this.byKey.size;
  }
}
