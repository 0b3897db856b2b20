/**
 * The rollout buckets of one evaluation, computed when a filter first needs one and then kept for the others that
 * read the same rollout key and field. A field's bucket rows (FieldBuckets) are looked up once per evaluation, at the
 * first rollout on it that is read. Buckets of fields whose rows are bypassed (values that do not come back) are
 * hashed four at a time with sha256x4: the one needed now, and speculatively the next pending ones of the ruleset
 * that have a value in this context and are usually read. A rollout behind a condition most contexts fail
 * (`user.role IS admin AND rollout`) is rarely read: speculating on it cost a lane, and a compression per four.
 */
import type { EvaluationScope } from "./evaluation-scope.js";
import { bucketOfFirstWord } from "./rollout-hasher.js";
import type { RolloutSlot } from "./rollout-hash.js";
import { UNKNOWN_BUCKET } from "./rollout-bucket.js";
import { compressLanes, LANES, lanes } from "./sha256x4.js";

const laneSlots = new Int32Array(LANES);

/** Buckets hashed in batches so far, in this thread (for tests and metrics). */
export const batchedBuckets = { count: 0 };

/** A bucket not computed yet in this evaluation. */
const UNRESOLVED = -1;
/**
 * A bucket b hashed ahead is held as -2 - b until a filter reads it, so that the read can be counted; the same map
 * turns it back into b.
 */
const speculated = (bucket: number): number => -2 - bucket;

/** Evaluations between judgements of which slots to speculate on. */
const JUDGE_EVERY = 1_024;
/** Speculate on a slot read in at least this share of evaluations. */
const SPECULATE_FROM = 0.5;

/** Starts an evaluation of the scope's ruleset: no bucket known yet; now and then, judges which slots to speculate on. */
export function beginEvaluation(scope: EvaluationScope): void {
  scope.buckets.fill(UNRESOLVED);
  scope.rows.fill(undefined);
  if (++scope.evaluations < JUDGE_EVERY) return;
  for (const slot of scope.slots) {
    slot.speculate = slot.reads >= SPECULATE_FROM * scope.evaluations;
    slot.reads = 0;
  }
  scope.evaluations = 0;
}

/** The bucket of `slot` for a filter that reads it (`value`: the slot's field's value in this scope). */
export function readBucket(scope: EvaluationScope, slot: number, value: string): number {
  const held = scope.buckets[slot]!;
  if (held >= 0) return held;
  scope.slots[slot]!.reads++;
  if (held === UNRESOLVED) return resolveBucket(scope, slot, value);
  const bucket = speculated(held);
  scope.buckets[slot] = bucket;
  return bucket;
}

/** This evaluation's row of the slot's field (null: bypassed), looked up at the first read of a rollout on it. */
function rowOf(scope: EvaluationScope, slot: RolloutSlot, value: string): Int32Array | null {
  let row = scope.rows[slot.rowsIndex];
  if (row === undefined) scope.rows[slot.rowsIndex] = row = slot.rows.row(value);
  return row;
}

/**
 * The bucket of `slot` for `value`: from its field's row, else hashed, four lanes at a time when the input fits one
 * block — the other lanes taking the next pending slots that are usually read and whose buckets no row holds (rows
 * missing them are filled in: a field's rows start empty after every bypass, and a one-lane hash per rollout of a
 * 1,000-feature ruleset was a tenth of the worker's time while they filled).
 */
function resolveBucket(scope: EvaluationScope, slot: number, value: string): number {
  const { slots, buckets, values, rows } = scope;
  const own = slots[slot]!;
  const ownRow = rowOf(scope, own, value);
  if (ownRow !== null && ownRow[own.column] !== UNKNOWN_BUCKET) return (buckets[slot] = ownRow[own.column]!);
  if (!own.hasher.fillLane(value, 0)) {
    const bucket = own.hasher.bucketByNodeCrypto(value);
    if (ownRow !== null) ownRow[own.column] = bucket;
    return (buckets[slot] = bucket);
  }
  laneSlots[0] = slot;
  let filled = 1;
  for (let next = slot + 1; next < slots.length && filled < LANES; next++) {
    if (buckets[next] !== UNRESOLVED) continue;
    const other = slots[next]!;
    if (!other.speculate) continue;
    // A field not looked up yet in this evaluation is left alone unless bypassed: looking it up now would count as a
    // read of its rows.
    const row = rows[other.rowsIndex];
    if (row === undefined ? !other.rows.bypassing : row !== null && row[other.column] !== UNKNOWN_BUCKET) continue;
    const otherValue = values[other.fieldId];
    if (otherValue !== undefined && other.hasher.fillLane(otherValue, filled)) laneSlots[filled++] = next;
  }
  compressLanes();
  batchedBuckets.count += filled;
  for (let lane = 0; lane < filled; lane++) {
    const laneSlot = laneSlots[lane]!;
    const bucket = bucketOfFirstWord(lanes.output[lane]!);
    buckets[laneSlot] = lane === 0 ? bucket : speculated(bucket);
    const laneOwner = slots[laneSlot]!;
    const row = rows[laneOwner.rowsIndex];
    if (row !== undefined && row !== null) row[laneOwner.column] = bucket;
  }
  return buckets[slot]!;
}
