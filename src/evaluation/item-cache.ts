/** What a compiled feature remembers of its outcomes; answer-writer.ts fills it and reads it. */

/** One remembered outcome: its item's bytes, and what a caller derived from it (see OutcomeView.memo). */
export interface CachedOutcome {
  readonly bytes: Uint8Array;
  memo: unknown;
}

/** The remembered outcomes of one compiled feature. */
export class ItemCache {
  /** Outcomes with no missing field (most of them) whose number is small, by that number. */
  readonly dense: (CachedOutcome | undefined)[] = [];
  /** Outcomes with no missing field and a larger number. */
  readonly plain = new Map<number, CachedOutcome>();
  /** The others, by that number and then by the two lists' missing-fields code. */
  readonly withMissing = new Map<number, Map<number, CachedOutcome>>();
  size = 0;
}
