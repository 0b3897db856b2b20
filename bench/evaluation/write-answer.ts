/**
 * Evaluation alone, in-process: writeAnswer (src/evaluation/answer-writer.ts) over distinct contexts drawn like the
 * service's traffic (10,000 users × 200 companies, the bench's rules), without HTTP, threads or the remote context.
 * Prints µs per answer for each timed round, so builds can be compared side by side and profiled with
 * `node --cpu-prof`.
 */
import { parseArgs } from "node:util";
import { compileRuleset } from "../../src/evaluation/compile-ruleset.js";
import { contextValues } from "../../src/evaluation/evaluate-ruleset.js";
import { writeAnswer, type AnswerTarget } from "../../src/evaluation/answer-writer.js";
import { seededRandom } from "../../tools/support/seeded-random.js";
import { featureDefinitions, trafficContextParams } from "../support/fixtures.js";

const USAGE = `node dist/bench/evaluation/write-answer.js [--features N] [--rounds N] [--answers N]

Evaluation alone, in-process: writeAnswer over distinct contexts (10,000 users × 200 companies, the bench's rules),
no HTTP, threads or remote context. Prints µs per answer for each timed round (after one untimed warm-up round).
  --features N   features in the ruleset (default 200)
  --rounds N     timed rounds (default 8)
  --answers N    answers per round (default 20,000 at up to 200 features, 4,000 above)
`;

/** The traffic's context as the query string would give it, plus the attributes the remote context would add. */
function trafficContext(user: number, company: number, index: number): Record<string, Record<string, string>> {
  const context: Record<string, Record<string, string>> = {};
  for (const [name, value] of trafficContextParams(user, company)) {
    const [, kind, attribute] = name.split(".") as [string, string, string];
    (context[kind] ??= {})[attribute] = value;
  }
  context.company!.createdAt = `2024-0${1 + (index % 9)}-01`;
  context.user!.role = index % 5 === 0 ? "admin" : "member";
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
  const random = seededRandom(7);
  const contexts = Array.from({ length: 40_000 }, (_, index) =>
    contextValues(ruleset, trafficContext(Math.floor(random() * 10_000), Math.floor(random() * 200), index)),
  );
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
