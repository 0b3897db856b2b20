/**
 * The `evaluate` events of one `/features/enabled` request (or any feature events sharing one action and context) as
 * the tracking log holds them: the keys, and each event's stored row already encoded and concatenated, as the
 * featureEvents log group stores them. The worker encodes one byte string and a list of keys per request, which
 * costs it less and the log fewer bytes than records of separate result objects and row buffers, the form logged
 * before (docs/BENCHMARKS.md, "Figures behind the code"). Logs written before still hold that form, and are still projected.
 */
import type { FeatureEventItem } from "../schemas/tracking.js";
import { packValue } from "../storage/value-encoding.js";
import type { FeatureEventRecord } from "./tracking-records.js";

export interface Evaluations {
  action: FeatureEventItem["action"];
  evalContext: Record<string, unknown> | null;
  /** Each feature's key, in answer order. */
  keys: readonly string[];
  /** Each feature's result, in the same order; absent when every one is true (all that `/features/enabled` lists). */
  evalResults?: readonly FeatureEventItem["evalResult"][];
  /** Each feature's stored row (EVALUATION_FIELDS' values, see evaluationRow): their msgpack encodings, concatenated. */
  packedRows: Uint8Array;
}

/** The earlier logged form, still found in older logs: a result object and a row per feature. */
interface EvaluationsAsLoggedBefore {
  action: FeatureEventItem["action"];
  evalContext: Record<string, unknown> | null;
  results: readonly Pick<FeatureEventItem, "key" | "evalResult">[];
  /** EVALUATION_FIELDS' values, as an array or as its msgpack bytes. */
  rows: readonly (unknown[] | Uint8Array)[];
}

/** What a tracking log record may hold: the current form, or the one logged before. */
export type LoggedEvaluations = Evaluations | EvaluationsAsLoggedBefore;

/** The fields each row of an evaluation group holds, in order. */
export const EVALUATION_FIELDS: (keyof FeatureEventRecord & string)[] = ["key", "targetingVersion", "evalResult", "evalRuleResults", "evalMissingFields"];

/** The stored row of one feature's evaluate event, encoded (callers keep it per outcome: it is the same every time). */
export function evaluationRow(event: Pick<FeatureEventItem, "key" | "targetingVersion" | "evalResult" | "evalRuleResults" | "evalMissingFields">): Uint8Array {
  return packValue([event.key, event.targetingVersion ?? null, event.evalResult ?? null, event.evalRuleResults ?? null, event.evalMissingFields ?? null]);
}

/** Encoded rows, concatenated into one byte string. */
function concatenateRows(rows: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const row of rows) size += row.length;
  const packed = new Uint8Array(size);
  let offset = 0;
  for (const row of rows) {
    packed.set(row, offset);
    offset += row.length;
  }
  return packed;
}

/** Feature events of one action and context, from their keys, results and encoded rows (results all true: leave out). */
export function evaluationsOf(
  action: FeatureEventItem["action"],
  evalContext: Record<string, unknown> | null,
  keys: readonly string[],
  rows: readonly Uint8Array[],
  evalResults?: readonly FeatureEventItem["evalResult"][],
): Evaluations {
  const allTrue = evalResults === undefined || evalResults.every((result) => result === true);
  return { action, evalContext, keys, ...(allTrue ? {} : { evalResults }), packedRows: concatenateRows(rows) };
}

/** How many feature events a logged evaluation holds, in either form. */
export function evaluationCount(evaluations: LoggedEvaluations): number {
  return "keys" in evaluations ? evaluations.keys.length : evaluations.results.length;
}

/** A logged evaluation in the current form (a record logged before is converted). */
export function currentEvaluations(evaluations: LoggedEvaluations): Evaluations {
  if ("keys" in evaluations) return evaluations;
  const { action, evalContext, results, rows } = evaluations;
  const encoded = rows.map((row) => (row instanceof Uint8Array ? row : packValue(row)));
  return evaluationsOf(
    action,
    evalContext,
    results.map((result) => result.key),
    encoded,
    results.map((result) => result.evalResult),
  );
}
