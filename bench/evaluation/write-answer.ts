/**
 * Evaluation alone, in-process: writeAnswer (src/evaluation/answer-writer.ts) over the bench's distinct-context
 * queries (10,000 users × 200 companies, the bench's rules), each merged with its seeded user's and company's stored
 * attributes as remote context does, without HTTP, threads or the store.
 * Prints µs per answer for each timed round, so builds can be compared side by side and profiled with
 * `node --cpu-prof`.
 */
import { parseArgs } from "node:util";
import { compileRuleset } from "../../src/evaluation/compile-ruleset.js";
import { contextFromQuery } from "../../src/evaluation/context-from-query.js";
import { contextValues } from "../../src/evaluation/evaluate-ruleset.js";
import { writeAnswer, type AnswerTarget } from "../../src/evaluation/answer-writer.js";
import { featureDefinitions, trafficEntitiesBodies, trafficQueries } from "../support/fixtures.js";

const USAGE = `node dist/bench/evaluation/write-answer.js [--features N] [--rounds N] [--answers N]

Evaluation alone, in-process: writeAnswer over the bench's distinct-context queries (10,000 users × 200 companies,
the bench's rules), merged with the seeded users' and companies' attributes; no HTTP, threads or store. Prints µs
per answer for each timed round (after one untimed warm-up round).
  --features N   features in the ruleset (default 200)
  --rounds N     timed rounds (default 8)
  --answers N    answers per round (default 20,000 at up to 200 features, 4,000 above)
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

function main(): void {
  const { values } = parseArgs({ options: { features: { type: "string" }, rounds: { type: "string" }, answers: { type: "string" } } });
  const features = Number(values.features ?? 200);
  const rounds = Number(values.rounds ?? 8);
  const answers = Number(values.answers ?? (features > 200 ? 4_000 : 20_000));
  const ruleset = compileRuleset(featureDefinitions(features));
  const stored = storedAttributes();
  const contexts = trafficQueries(40_000).map((query) => contextValues(ruleset, trafficContext(query, stored)));
  const options = { flagStateVersion: 1, remoteContextUsed: true, target: answerTarget() };
  let bytes = 0;
  const figures: string[] = [];
  for (let round = 0; round <= rounds; round++) {
    const start = process.hrtime.bigint();
    for (let index = 0; index < answers; index++) bytes += writeAnswer(ruleset, contexts[(round * answers + index) % contexts.length]!, options).length;
    const microseconds = Number(process.hrtime.bigint() - start) / answers / 1_000;
    if (round > 0) figures.push(microseconds.toFixed(2));
  }
  console.log(`${features} features, ${answers} answers a round (${Math.round(bytes / (answers * (rounds + 1)))} bytes each): ${figures.join(" ")} µs per answer`);
}

if (process.argv.includes("--help") || process.argv.includes("-h")) process.stdout.write(USAGE);
else main();
