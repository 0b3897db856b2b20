/**
 * The compiled evaluator against the reference, on the same realistic rule sets and the same stream of contexts
 * (1,000 users coming back, as they do in production, which the compiled ruleset's rollout cache is built for).
 */
import { compileRuleset, evaluateRuleset, serializeEvaluation } from "../../src/evaluation/index.js";
import { contextObject, DISTINCT_USERS, featureDefinitions } from "../support/fixtures.js";
import { consume, runMicro, type MicroFigure, type MicroOptions } from "../support/micro.js";
import { buildReference, evaluateWithReference } from "./reference-evaluator.js";

export const EVALUATOR_FEATURE_COUNTS = [10, 50] as const;

export async function benchEvaluatorVsReference(options: MicroOptions): Promise<MicroFigure[]> {
  // The reference reports NaN comparisons with console.error; none are expected here, but logging would skew timings.
  const consoleError = console.error;
  console.error = () => undefined;
  try {
    return await measureBoth(options);
  } finally {
    console.error = consoleError;
  }
}

async function measureBoth(options: MicroOptions): Promise<MicroFigure[]> {
  const contexts = Array.from({ length: DISTINCT_USERS }, (_, index) => contextObject(index));
  const figures: MicroFigure[] = [];
  for (const count of EVALUATOR_FEATURE_COUNTS) {
    const definitions = featureDefinitions(count);
    const compiled = compileRuleset(definitions);
    const reference = buildReference(definitions);
    let next = 0;
    const context = () => contexts[next++ % contexts.length]!;
    figures.push(
      ...(await runMicro(
        `evaluate ${count} features`,
        [
          { name: `compiled evaluateRuleset (${count} features)`, fn: () => consume(evaluateRuleset(compiled, context())) },
          { name: `reference newEvaluator (${count} features)`, fn: () => consume(evaluateWithReference(reference, context())) },
          {
            name: `compiled evaluate + serialise (${count} features)`,
            fn: () => consume(serializeEvaluation(evaluateRuleset(compiled, context()))),
          },
          { name: `compileRuleset (${count} features)`, fn: () => consume(compileRuleset(definitions)) },
        ],
        options,
      )),
    );
  }
  return figures;
}
