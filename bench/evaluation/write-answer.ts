/**
 * Evaluation alone, in-process: writeAnswer (src/evaluation/answer-writer.ts) over the bench's distinct-context
 * queries (10,000 users × 200 companies, the bench's rules), each merged with its seeded user's and company's stored
 * attributes as remote context does, without HTTP, threads or the store.
 *
 * Run on its own, it prints µs per answer for each timed round, so builds can be compared side by side and profiled
 * with `node --cpu-prof`. `npm run bench` runs it too (benchEvaluationAlone): one thread's evaluation alone bounds
 * what a worker thread can answer, whatever the rest costs (the report's bounds of the evaluate-N targets).
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { compileRuleset } from "../../src/evaluation/compile-ruleset.js";
import { contextFromQuery } from "../../src/evaluation/context-from-query.js";
import { contextValues } from "../../src/evaluation/evaluate-ruleset.js";
import { writeAnswer, type AnswerTarget } from "../../src/evaluation/answer-writer.js";
import { featureDefinitions, trafficEntitiesBodies, trafficQueries } from "../support/fixtures.js";
import type { Lab } from "../support/lab.js";
import { median } from "../support/stats.js";

const USAGE = `node dist/bench/evaluation/write-answer.js [--features N] [--rounds N] [--answers N]

Evaluation alone, in-process: writeAnswer over the bench's distinct-context queries (10,000 users × 200 companies,
the bench's rules), merged with the seeded users' and companies' attributes; no HTTP, threads or store. Prints µs
per answer for each timed round (after one untimed warm-up round).
  --features N   features in the ruleset (default 200)
  --rounds N     timed rounds (default 8)
  --answers N    answers per round (default: 4,000,000 ÷ features, at most 20,000; 4,000 at 1,000 features)
`;

/** The stored attributes of the traffic's users and companies, by kind and id, as the bench seeds them. */
function storedAttributes(): Map<string, Record<string, unknown>> {
  const stored = new Map<string, Record<string, unknown>>();
  for (const item of trafficEntitiesBodies().flat()) {
    const key = item.type === "user" ? `user\u0000${String(item.userId)}` : `company\u0000${String(item.companyId)}`;
    stored.set(key, item.attributes as Record<string, unknown>);
  }
  return stored;
}

/** The context of a traffic query as evaluation sees it: the query's, over the stored attributes (remote context). */
function trafficContext(query: string, stored: Map<string, Record<string, unknown>>): Record<string, unknown> {
  const parsed = contextFromQuery(query);
  if (!parsed.ok) throw new Error(`bench query refused: ${query}`);
  const context = parsed.context;
  for (const kind of ["user", "company"] as const) {
    const sent = context[kind] as Record<string, unknown> | undefined;
    const attributes = sent === undefined ? undefined : stored.get(`${kind}\u0000${String(sent.id)}`);
    if (attributes !== undefined) context[kind] = { ...attributes, ...sent };
  }
  return context;
}

/** Room for answers in one buffer, reused from its start when full (an answer is sent before the next is written). */
function answerTarget(): AnswerTarget {
  const bytes = new Uint8Array(1 << 22);
  let used = 0;
  return {
    bytes,
    claim(length: number): number {
      if (used + length > bytes.length) used = 0;
      const start = used;
      used += length;
      return start;
    },
  };
}

/** Distinct contexts evaluated in turn: more than a run's answers at 200 features, so that few come round again. */
const MAX_CONTEXTS = 40_000;

export interface EvaluationAloneFigure {
  features: number;
  /** Median over the timed rounds. */
  microsecondsPerAnswer: number;
  /** µs per answer of each timed round. */
  runs: number[];
  answersPerRound: number;
  bytesPerAnswer: number;
}

/** Times writeAnswer over the traffic's contexts: an untimed warm-up round, then `rounds` timed ones. */
export function measureEvaluationAlone(features: number, rounds: number, answers: number): EvaluationAloneFigure {
  const ruleset = compileRuleset(featureDefinitions(features));
  const stored = storedAttributes();
  const contexts = trafficQueries(Math.min(MAX_CONTEXTS, answers * (rounds + 1))).map((query) => contextValues(ruleset, trafficContext(query, stored)));
  const options = { flagStateVersion: 1, remoteContextUsed: true, target: answerTarget() };
  let bytes = 0;
  const runs: number[] = [];
  for (let round = 0; round <= rounds; round++) {
    const start = process.hrtime.bigint();
    for (let index = 0; index < answers; index++) bytes += writeAnswer(ruleset, contexts[(round * answers + index) % contexts.length]!, options).length;
    const microseconds = Number(process.hrtime.bigint() - start) / answers / 1_000;
    if (round > 0) runs.push(microseconds);
  }
  return { features, microsecondsPerAnswer: median(runs), runs, answersPerRound: answers, bytesPerAnswer: Math.round(bytes / (answers * (rounds + 1))) };
}

/** Answers per round: about `budget` features evaluated, at most `cap` answers (the CLI's defaults at full size). */
export function answersPerRound(features: number, budget: number, cap: number): number {
  return Math.max(1, Math.min(cap, Math.round(budget / features)));
}

/** The bench's figure for each feature count, in-process, before any server runs. */
export function benchEvaluationAlone(lab: Lab, featureCounts: readonly number[]): EvaluationAloneFigure[] {
  const { rounds, budget, cap } = lab.mode.evaluationAlone;
  return featureCounts.map((features) => {
    const figure = measureEvaluationAlone(features, rounds, answersPerRound(features, budget, cap));
    lab.log(`evaluation alone at ${features} features: ${figure.microsecondsPerAnswer.toFixed(1)} µs an answer`);
    return figure;
  });
}

function main(): void {
  const { values } = parseArgs({ options: { features: { type: "string" }, rounds: { type: "string" }, answers: { type: "string" } } });
  const features = Number(values.features ?? 200);
  const rounds = Number(values.rounds ?? 8);
  const answers = Number(values.answers ?? answersPerRound(features, 4_000_000, 20_000));
  const figure = measureEvaluationAlone(features, rounds, answers);
  console.log(
    `${features} features, ${answers} answers a round (${figure.bytesPerAnswer} bytes each): ${figure.runs.map((run) => run.toFixed(2)).join(" ")} µs per answer`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (process.argv.includes("--help") || process.argv.includes("-h")) process.stdout.write(USAGE);
  else main();
}
