/**
 * Micro-benchmark: evaluating all features of an environment for one context, our compiled evaluator against the
 * reference `newEvaluator` used the way the Node SDK uses it (one evaluator for targeting, one for config, per
 * feature). Same definitions, same contexts, one process, one run — compare the ratio, not the absolute figures.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/evaluation/compile-vs-reference.js
 */
import { Bench } from "tinybench";

import {
  compileRuleset,
  type EvaluatedFeature,
  evaluateRuleset,
  type FeatureDefinition,
  serializeEvaluation,
} from "../../src/evaluation/index.js";
import { contextObject, DISTINCT_USERS, featureDefinitions } from "../support/fixtures.js";
import { buildReference } from "./reference-evaluator.js";

/** The reference, prepared once per ruleset as the Node SDK does, its answers shaped like our items for the JSON rows. */
function referenceEvaluator(
  definitions: FeatureDefinition[],
): (context: Record<string, unknown>) => EvaluatedFeature[] {
  const features = buildReference(definitions).map((evaluators, index) => ({ ...evaluators, definition: definitions[index]! }));
  return (context) =>
    features.map(({ definition, enabled, config }) => {
      const enabledResult = enabled(context, definition.key);
      const configResult = config(context, definition.key);
      return {
        key: definition.key,
        isEnabled: enabledResult.value ?? false,
        targetingVersion: definition.targeting.version,
        stage: definition.stage,
        ruleEvaluationResults: enabledResult.ruleEvaluationResults,
        missingContextFields: enabledResult.missingContextFields ?? [],
        config: {
          key: configResult.value?.key ?? null,
          payload: configResult.value?.payload ?? null,
          version: definition.config.version,
          targetingVersion: definition.config.version,
          default: configResult.value === undefined,
          ruleEvaluationResults: configResult.ruleEvaluationResults,
          missingContextFields: configResult.missingContextFields ?? [],
        },
      };
    });
}

const toMapJson = (results: EvaluatedFeature[]) =>
  JSON.stringify(Object.fromEntries(results.map((item) => [item.key, item])));

/** Contexts of DISTINCT_USERS users, cycled: a steady stream where rollout buckets repeat. */
const repeatingContexts = Array.from({ length: DISTINCT_USERS }, (_, index) => contextObject(index));

/** A new user id on every call: every rollout is a cache miss, the worst case for our bucket cache. */
let uniqueUser = 0;
function uniqueUserContext(): Record<string, unknown> {
  const base = repeatingContexts[uniqueUser % DISTINCT_USERS] as { user: Record<string, unknown> };
  return { ...base, user: { ...base.user, id: `unique-${uniqueUser++}` } };
}

interface Scenario {
  name: string;
  ours: () => unknown;
  reference: () => unknown;
}

function scenarios(featureCount: number): Scenario[] {
  const definitions = featureDefinitions(featureCount);
  const ruleset = compileRuleset(definitions);
  const reference = referenceEvaluator(definitions);
  let next = 0;
  const nextContext = () => repeatingContexts[next++ % DISTINCT_USERS] as Record<string, unknown>;
  return [
    {
      name: `${featureCount} features, ${DISTINCT_USERS} repeating users`,
      ours: () => evaluateRuleset(ruleset, nextContext()),
      reference: () => reference(nextContext()),
    },
    {
      name: `${featureCount} features, repeating users, with JSON`,
      ours: () => serializeEvaluation(evaluateRuleset(ruleset, nextContext())),
      reference: () => toMapJson(reference(nextContext())),
    },
    {
      name: `${featureCount} features, a new user every call`,
      ours: () => evaluateRuleset(ruleset, uniqueUserContext()),
      reference: () => reference(uniqueUserContext()),
    },
  ];
}

/** Fails loudly if the two evaluators disagree on the benchmark's own inputs: a fast wrong answer is no result. */
function checkAgreement(featureCount: number): void {
  const definitions = featureDefinitions(featureCount);
  const ruleset = compileRuleset(definitions);
  const reference = referenceEvaluator(definitions);
  for (const context of repeatingContexts.slice(0, 200)) {
    const ours = serializeEvaluation(evaluateRuleset(ruleset, context));
    const theirs = toMapJson(reference(context));
    if (ours !== theirs) throw new Error(`evaluators disagree for ${JSON.stringify(context)}:\n${ours}\n${theirs}`);
  }
}

async function main(): Promise<void> {
  // The reference logs NaN comparisons with console.error; none are expected here, but they would skew timings.
  console.error = () => undefined;
  const rows: Record<string, string | number>[] = [];
  for (const featureCount of [10, 50]) {
    checkAgreement(featureCount);
    for (const scenario of scenarios(featureCount)) {
      const bench = new Bench({ time: 1_000, warmupTime: 200 });
      bench.add("ours", scenario.ours).add("reference", scenario.reference);
      await bench.run();
      const opsPerSecond = (name: string) => {
        const result = bench.getTask(name)?.result;
        return result !== undefined && "throughput" in result ? result.throughput.mean : Number.NaN;
      };
      const ours = opsPerSecond("ours");
      const reference = opsPerSecond("reference");
      rows.push({
        scenario: scenario.name,
        "ours (ops/s)": Math.round(ours),
        "reference (ops/s)": Math.round(reference),
        ratio: `${(ours / reference).toFixed(1)}×`,
      });
    }
  }
  console.table(rows);
}

const USAGE = `node dist/bench/evaluation/compile-vs-reference.js

Evaluating every feature of an environment for one context, the compiled evaluator against the reference
@bucketco/flag-evaluation used the way the Node SDK uses it, at 10 and 50 features (repeating users, unique users,
with serialisation). Checks both agree first. Prints a table of ops/s and the ratio. No options.
`;

if (process.argv.includes("--help") || process.argv.includes("-h")) process.stdout.write(USAGE);
else await main();
