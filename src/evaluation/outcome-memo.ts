/**
 * What callers derive from one remembered outcome of a feature (OutcomeView.memo), shared by them: several callers see
 * the same outcomes (`/features/enabled` keeps its event row there, OFREP its flags' text), so each keeps its part
 * in one record instead of claiming the slot.
 */
import type { OutcomeView } from "./answer-writer.js";
import type { OfrepOutcome } from "./ofrep-answer.js";

export interface OutcomeMemo {
  /** The stored row of an access event (`evaluate`, `check`) for this outcome. */
  eventRow?: Uint8Array;
  /** The stored row of a `check-config` event for this outcome. */
  configEventRow?: Uint8Array;
  /** The OFREP text of this outcome (ofrep-answer.ts). */
  ofrep?: OfrepOutcome;
}

/** The outcome's memo record, made on first use (kept only when the outcome itself is remembered). */
export function outcomeMemo(outcome: OutcomeView): OutcomeMemo {
  let memo = outcome.memo as OutcomeMemo | undefined;
  if (memo === undefined) outcome.memo = memo = {};
  return memo;
}
