/** The micro-benchmarks set against what each is meant to beat or match. */
import { EVALUATOR_FEATURE_COUNTS } from "../evaluation/evaluator-vs-reference.js";
import type { MicroFigure } from "../support/micro.js";
import { verdict, type Comparison } from "./comparison.js";

/** Each micro task against the one it is meant to beat or match. */
export function buildMicroComparisons(micro: readonly MicroFigure[]): Comparison[] {
  const find = (name: string) => micro.find((figure) => figure.name === name);
  const pair = (id: string, name: string, baselineName: string, target?: { min: number; text: string }): Comparison | undefined => {
    const figure = find(name);
    const baseline = find(baselineName);
    if (!figure && !baseline) return undefined;
    const value = figure?.itemsPerSecond ?? Number.NaN;
    const baselineValue = baseline?.itemsPerSecond ?? Number.NaN;
    const ratio = value / baselineValue;
    return {
      id,
      label: name,
      value,
      unit: figure && figure.itemsPerCall > 1 ? "items/s" : "ops/s",
      baselineId: undefined,
      baselineLabel: baselineName,
      baselineValue,
      ratio,
      ratioStyle: "times",
      target: target?.text,
      verdict: target === undefined ? "—" : verdict(Number.isFinite(ratio) && ratio >= target.min),
    };
  };
  const rows = [
    ...EVALUATOR_FEATURE_COUNTS.map((count) =>
      pair(`compiled-vs-reference-${count}`, `compiled evaluateRuleset (${count} features)`, `reference newEvaluator (${count} features)`, {
        min: 10,
        text: "≥ 10× the reference",
      }),
    ),
    pair("context-from-query-6", "contextFromQuery (6 params)", "URLSearchParams → object (6 params)"),
    pair("context-from-query-24", "contextFromQuery (24 params)", "URLSearchParams → object (24 params)"),
    pair("rollout-hash", "rolloutBucket (crypto.hash one-shot, latin1 digest)", "crypto.hash one-shot, Buffer digest"),
    pair("rollout-cache", "FieldBuckets row hit", "rolloutBucket (crypto.hash one-shot, latin1 digest)"),
    pair("codec-pack", "msgpackr pack", "JSON.stringify → Buffer"),
    pair("codec-unpack", "msgpackr unpack", "JSON.parse ← Buffer"),
    pair("bulk-validation", `parseTrackingCall("bulk") — valibot`, "JSON.parse of the body"),
  ];
  return rows.filter((row): row is Comparison => row !== undefined);
}
