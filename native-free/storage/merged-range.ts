import { compareUtf8 } from "./compare-utf8.js";
import type { Change, EncodedValue } from "./record-codec.js";
import type { TableState } from "./table-state.js";

/** Whether `key` lies in [start, end). */
export function inBounds(key: string, start: string | undefined, end: string | undefined): boolean {
  return (start === undefined || compareUtf8(key, start) >= 0) && (end === undefined || compareUtf8(key, end) < 0);
}

/**
 * A range over committed data with uncommitted changes laid on top: what a read inside a write transaction sees.
 * `overlay` holds only keys inside the bounds; a null change hides the committed key. Transactions are small, so
 * sorting the overlay per call costs little, and the committed side is walked lazily.
 */
export function* mergedRange(
  state: TableState | undefined,
  overlay: Map<string, Change>,
  start: string | undefined,
  end: string | undefined,
  reverse: boolean,
  limit: number,
): Generator<[string, EncodedValue]> {
  const overlayKeys = [...overlay.keys()].sort(compareUtf8);
  if (reverse) overlayKeys.reverse();
  const committed = state ? state.index.keys(start, end, reverse, Number.POSITIVE_INFINITY) : undefined;
  let next = committed?.next();
  let o = 0;
  let yielded = 0;
  while (yielded < limit) {
    const committedKey = next && !next.done ? next.value : undefined;
    const overlayKey = overlayKeys[o];
    if (committedKey === undefined && overlayKey === undefined) return;
    let order: number;
    if (committedKey === undefined) order = 1;
    else if (overlayKey === undefined) order = -1;
    else order = reverse ? compareUtf8(overlayKey, committedKey) : compareUtf8(committedKey, overlayKey);
    if (order < 0) {
      yielded++;
      yield [committedKey!, state!.values.get(committedKey!)!];
      next = committed!.next();
      continue;
    }
    // The overlay decides for its key; a committed entry under the same key is shadowed.
    if (order === 0) next = committed!.next();
    o++;
    const change = overlay.get(overlayKey!)!;
    if (change !== null) {
      yielded++;
      yield [overlayKey!, change];
    }
  }
}
