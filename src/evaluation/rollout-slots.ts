/**
 * The rollout buckets of one evaluation, computed when a filter first needs one and then kept for the others that
 * read the same rollout key and field. Buckets of keys whose cache is bypassed (values that do not come back) are
 * hashed four at a time with sha256x4: the one needed now, and speculatively the next pending ones of the ruleset
 * that have a value in this context. Most of those are read a moment later; one short-circuited away costs a lane.
 */
import type { EvaluationScope } from "./compile-filter.js";
import { bucketOfFirstWord } from "./rollout-hasher.js";
import { compressLanes, LANES, output } from "./sha256x4.js";

const laneSlots = new Int32Array(LANES);

/** Buckets hashed in batches so far, in this thread (for tests and metrics). */
export const batchedBuckets = { count: 0 };

/** The bucket of `slot` for `value` (the slot's field's value in this scope), computing it and maybe its neighbours. */
export function resolveBucket(scope: EvaluationScope, slot: number, value: string): number {
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
    if (buckets[next]! >= 0) continue;
    const other = slots[next]!;
    if (!other.cache.bypassing) continue;
    const otherValue = values[other.fieldId];
    if (otherValue !== undefined && other.cache.hasher.fillLane(otherValue, lanes)) laneSlots[lanes++] = next;
  }
  compressLanes();
  batchedBuckets.count += lanes;
  for (let lane = 0; lane < lanes; lane++) {
    const laneSlot = laneSlots[lane]!;
    buckets[laneSlot] = bucketOfFirstWord(output[lane]!);
    slots[laneSlot]!.cache.countBypassed();
  }
  return buckets[slot]!;
}
