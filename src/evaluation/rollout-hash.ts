/** Bounded caches of the reference evaluator's rollout buckets (the hash itself: rollout-bucket.ts). */
import { HitRateGate } from "../storage/hit-rate-gate.js";
import { RolloutHasher } from "./rollout-hasher.js";
import { UNKNOWN_BUCKET } from "./rollout-bucket.js";

/**
 * Remembers the rollout buckets of every rollout on one context field, by the field's value: a row per value, a
 * column per rollout key, so that one lookup per evaluation serves all the rollouts on the field (a cache per rollout
 * key made a company's rollouts one map lookup each, which large rulesets felt; docs/BENCHMARKS.md, "Figures behind
 * the code"). Two generations of rows: when the current one fills up it
 * becomes the previous one and the older is dropped, so recently used values survive a turnover (an LRU
 * approximation that costs no bookkeeping per hit). Keyed by the value alone, whose hash V8 keeps in the string.
 *
 * A hit saves a hash per rollout read; a miss costs the lookup, a new row and one-lane hashes where the bypass would
 * hash four lanes at a time (rollout-slots.ts). So a HitRateGate bypasses the rows of a field whose values rarely come
 * back (user ids under real traffic), and nothing is kept meanwhile.
 */
export class FieldBuckets {
  /** A hit saves about as much hashing as a miss adds, so caching a rollout key pays from about half hits (docs/BENCHMARKS.md, "Figures behind the code"). */
  static readonly BREAK_EVEN = 0.5;

  private current = new Map<string, Int32Array>();
  private previous = new Map<string, Int32Array>();
  private gate!: HitRateGate;
  #generationSize = 0;
  #columns = 0;

  constructor(generationSize = 10_000) {
    this.generationSize = generationSize;
  }

  get generationSize(): number {
    return this.#generationSize;
  }

  /**
   * Sizes the generations, and the gate's sample window with them: a value can only hit when it comes back within
   * what the rows hold (up to two generations), so a window of four generations sees every reuse they can serve. A
   * fixed window would keep a large ruleset's user-id rollouts sampling (inserting, hashing one lane at a time) for
   * seconds of traffic (docs/BENCHMARKS.md, "Figures behind the code").
   */
  set generationSize(size: number) {
    this.#generationSize = size;
    const sample = Math.min(4 * 1_024, Math.max(64, 4 * size));
    this.gate = new HitRateGate(FieldBuckets.BREAK_EVEN, sample, 4 * sample);
  }

  /** A column for one more rollout key; rows held so far are dropped (they have no room for it). */
  addColumn(): number {
    this.current = new Map();
    this.previous = new Map();
    return this.#columns++;
  }

  get columns(): number {
    return this.#columns;
  }

  /**
   * The row of `value`: its buckets by column, UNKNOWN_BUCKET where none was computed yet (fill them in); null while
   * the rows are bypassed. Asked once per evaluation that reads a rollout on the field.
   */
  row(value: string): Int32Array | null {
    if (!this.gate.open()) return null;
    let hit = true;
    let row = this.current.get(value);
    if (row === undefined) {
      row = this.previous.get(value);
      if (row === undefined) {
        row = new Int32Array(this.#columns).fill(UNKNOWN_BUCKET);
        hit = false;
      }
      if (this.current.size >= this.#generationSize) {
        this.previous = this.current;
        this.current = new Map();
      }
      this.current.set(value, row);
    }
    if (this.gate.record(hit)) {
      // Nothing is kept while bypassing: what the next sample finds is reuse within that sample alone.
      this.current = new Map();
      this.previous = new Map();
    }
    return row;
  }

  /** Whether the rows are being bypassed now (values did not come back often enough). */
  get bypassing(): boolean {
    return this.gate.bypassing;
  }

  /** Rows asked for so far, bypassed or not; for tests and metrics. */
  get lookups(): number {
    return this.gate.lookups;
  }

  /** Whether a row for `value` is held, without touching the cache; for tests. */
  has(value: string): boolean {
    return this.current.has(value) || this.previous.has(value);
  }

  /** Rows held, for tests and metrics; at most twice the generation size. */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}

/** A rollout key and the context field whose value it hashes. */
export interface RolloutSlot {
  readonly fieldId: number;
  readonly hasher: RolloutHasher;
  /** The bucket rows of the slot's field, its index among the ruleset's fields with rollouts, and its column there. */
  readonly rows: FieldBuckets;
  readonly rowsIndex: number;
  readonly column: number;
  /** Whether a batched hash may compute this slot's bucket before a filter asks for it (see rollout-slots.ts). */
  speculate: boolean;
  /** Evaluations that read this slot's bucket since the last judgement. */
  reads: number;
}

/**
 * The rollout slots of one ruleset — one per (rollout key, field), shared by the filters that read the same hash
 * inputs — and the bucket rows of each field they read. The ruleset's entry budget is split once compilation is done.
 */
export class RolloutCaches {
  /** Buckets per generation for the whole ruleset; each field gets rows for its share, within the bounds below. */
  static readonly GENERATION_BUDGET = 65_536;
  static readonly MIN_ROWS = 256;
  static readonly MAX_ROWS = 16_384;

  private readonly hashers = new Map<string, RolloutHasher>();
  private readonly slotIds = new Map<string, number>();
  private readonly rowsByField = new Map<number, number>();
  /** Every (rollout key, attribute field) a filter of the ruleset reads, in the order compilation met them. */
  readonly slots: RolloutSlot[] = [];
  /** The bucket rows of every field a rollout reads, by the slots' rowsIndex. */
  readonly fields: FieldBuckets[] = [];

  /** The slot of a rollout on `rolloutKey` by the field `fieldId`: one bucket per evaluation, whichever filter asks. */
  slotFor(rolloutKey: string, fieldId: number): number {
    const name = `${rolloutKey}\u0000${fieldId}`;
    let slot = this.slotIds.get(name);
    if (slot === undefined) {
      let rowsIndex = this.rowsByField.get(fieldId);
      if (rowsIndex === undefined) {
        rowsIndex = this.fields.push(new FieldBuckets()) - 1;
        this.rowsByField.set(fieldId, rowsIndex);
      }
      let hasher = this.hashers.get(rolloutKey);
      if (hasher === undefined) this.hashers.set(rolloutKey, (hasher = new RolloutHasher(`${rolloutKey}.`)));
      const rows = this.fields[rowsIndex]!;
      slot = this.slots.length;
      this.slots.push({ fieldId, hasher, rows, rowsIndex, column: rows.addColumn(), speculate: true, reads: 0 });
      this.slotIds.set(name, slot);
    }
    return slot;
  }

  /** Sizes every field's generations now that the number of slots is known: the same rows for each, one bucket per slot. */
  sizeGenerations(): void {
    const rows = Math.floor(RolloutCaches.GENERATION_BUDGET / Math.max(1, this.slots.length));
    const bounded = Math.min(RolloutCaches.MAX_ROWS, Math.max(RolloutCaches.MIN_ROWS, rows));
    for (const field of this.fields) field.generationSize = bounded;
  }

  get keyCount(): number {
    return this.hashers.size;
  }
}
