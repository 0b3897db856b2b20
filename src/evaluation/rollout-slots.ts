/**
 * The rollout buckets of one evaluation, computed when a filter first needs one and then kept for the others that
 * read the same rollout key and field. Buckets of keys whose cache is bypassed (values that do not come back) are
 * hashed four at a time with sha256x4: the one needed now, and speculatively the next pending ones of the ruleset
 * that have a value in this context and are usually read. A rollout behind a condition most contexts fail
 * (`user.role IS admin AND rollout`) is rarely read: speculating on it cost a lane, and a compression per four.
 */
import type { EvaluationScope } from "./compile-filter.js";
import { bucketOfFirstWord } from "./rollout-hasher.js";
import { compressLanes, LANES, output } from "./sha256x4.js";

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

/** The bucket of `slot` for `value`, computing it and maybe its neighbours. */
function resolveBucket(scope: EvaluationScope, slot: number, value: string): number {
  const { slots, buckets, values } = scope;
  const cache = slots[slot]!.cache;
  if (!cache.bypassing || !cache.hasher.fillLane(value, 0)) {
    const bucket = cache.bucket(value);
    buckets[slot] = bucket;
    return bucket;
  }
  laneSlots[0] = slot;
  let lanes = 1;
  for (let next = slot + 1; next < slots.length && lanes < LANES; next++) {
    if (buckets[next] !== UNRESOLVED) continue;
    const other = slots[next]!;
    if (!other.speculate || !other.cache.bypassing) continue;
    const otherValue = values[other.fieldId];
    if (otherValue !== undefined && other.cache.hasher.fillLane(otherValue, lanes)) laneSlots[lanes++] = next;
  }
  compressLanes();
  batchedBuckets.count += lanes;
  for (let lane = 0; lane < lanes; lane++) {
    const laneSlot = laneSlots[lane]!;
    const bucket = bucketOfFirstWord(output[lane]!);
    buckets[laneSlot] = lane === 0 ? bucket : speculated(bucket);
    slots[laneSlot]!.cache.countBypassed();
  }
  return buckets[slot]!;
}
