import { expect, it } from "vitest";
import type { EvaluateJob, JobResult } from "../protocol.js";
import { EvaluationCache } from "./evaluation-cache.js";
import { EvaluationServing } from "./evaluation-serving.js";

/**
 * Found by the fuzz suite (inline evaluation): two reads waiting for the same projection ran back to back in its
 * promise reactions, and the first answer, a view of the evaluator's reused buffer, reached the socket holding the
 * second's bytes.
 */
it("keeps an inline answer given after a wait for attributes whole, while other reads evaluate before it is sent", async () => {
  // The evaluator's reused buffer, as the answer writer's: every answer is a transient view of it.
  const shared = new Uint8Array(64);
  const evaluateNow = (job: EvaluateJob): JobResult => {
    const bytes = Buffer.from(job.query);
    shared.set(bytes);
    return { status: 200, headers: {}, body: shared.subarray(0, bytes.length), transient: true };
  };
  let projected!: () => void;
  const waiting = new Promise<void>((resolve) => (projected = resolve));
  const serving = new EvaluationServing({
    runner: { run: async (job) => evaluateNow(job), evaluateNow },
    trackingLog: { track: () => Promise.reject(new Error("unused")), evaluateEnabled: () => Promise.reject(new Error("unused")) },
    cache: new EvaluationCache({ maxEntries: 10, maxAnswerBytes: 1024, ttlMs: 0 }),
    flagStates: { current: () => 1 },
    config: { evaluationCacheMs: 0, compressMinBytes: 0 },
    attributeWrites: { projected: () => waiting },
  });

  const sent: string[] = [];
  // As a front end delivers (run-decision.ts): in a reaction to the answer's promise.
  const deliver = (answer: JobResult) => sent.push(Buffer.from(answer.body).toString());
  const first = serving.evaluate("env", "context.user.id=a-longer-answer", undefined, false);
  const second = serving.evaluate("env", "context.user.id=b", undefined, false);
  expect(first).toBeInstanceOf(Promise);
  const delivered = Promise.all([Promise.resolve(first).then(deliver), Promise.resolve(second).then(deliver)]);
  projected();
  await delivered;
  expect(sent).toEqual(["context.user.id=a-longer-answer", "context.user.id=b"]);
});
