import { errorResponse } from "../http/responses.js";
import { ServiceError } from "../errors/catalogue.js";
import type { AnswerTarget } from "../evaluation/index.js";
import type { LoggedRequest } from "../tracking/project-requests.js";
import type { Job, JobResult } from "./protocol.js";
import { evaluateJob } from "./evaluation/evaluate-job.js";
import type { JobContext } from "./job-context.js";
import { prepareTrackJob } from "./tracking/track-job.js";

function errorResult(error: ServiceError): JobResult {
  const response = errorResponse(error);
  return { status: response.status, body: response.body as string, headers: response.headers ?? {} };
}

/** A client's mistake becomes its 4xx; anything else is reported and answered with a 500. */
function failure(error: unknown, onFault: (error: unknown) => void): JobResult {
  if (error instanceof ServiceError) return errorResult(error);
  onFault(error);
  return errorResult(new ServiceError("INTERNAL"));
}

/** Runs one job to a ready answer; a job never rejects (client mistakes become 4xx, faults a logged 500). */
export async function runJob(jobContext: JobContext, job: Job, onFault: (error: unknown) => void): Promise<JobResult> {
  const [result] = await runJobs(jobContext, [job], onFault);
  return result!;
}

/** Receives an answer the moment it is computed: its body may be a transient view, to be copied at once. */
export type AnswerSink = (position: number, answer: JobResult) => void;

/**
 * Runs jobs that arrived together. Tracking requests are validated one by one (a bad one is answered alone), then
 * every valid one is appended to the tracking log as one record, in one transaction: each answer waits for that
 * commit and for nothing else (users, companies and analytics are projected from the log later, projector.ts).
 * The `evaluate` events of `/features/enabled` (and OFREP's `check` events) go into the same append, or are held to
 * share one with later batches' (HeldEvaluationEvents), and their answers never wait for it: an evaluation's answer
 * is a read, not an acknowledgement (API.md §4).
 *
 * With a `sink`, evaluation answers are handed to it as soon as they are written (their bytes straight from the
 * answer writer's buffer, or from the room claimed in `target`, so the sink must copy or keep them at once) and their
 * entries in the result are undefined.
 */
export function runJobs(jobContext: JobContext, jobs: readonly Job[], onFault: (error: unknown) => void): Promise<JobResult[]>;
export function runJobs(
  jobContext: JobContext,
  jobs: readonly Job[],
  onFault: (error: unknown) => void,
  sink: AnswerSink,
  target?: AnswerTarget,
): Promise<(JobResult | undefined)[]>;
export function runJobs(
  jobContext: JobContext,
  jobs: readonly Job[],
  onFault: (error: unknown) => void,
  sink?: AnswerSink,
  target?: AnswerTarget,
): Promise<(JobResult | undefined)[]> {
  const answers = new Array<Promise<JobResult | undefined> | JobResult | undefined>(jobs.length);
  const logged: LoggedRequest[] = [];
  const acknowledged: { position: number; answer: JobResult }[] = [];
  jobs.forEach((job, position) => {
    if (job.kind === "evaluate") {
      let evaluation;
      try {
        evaluation = evaluateJob(jobContext, job, { transient: sink !== undefined, ...(target !== undefined ? { target } : {}) });
      } catch (error) {
        answers[position] = failure(error, onFault);
        return;
      }
      const { featureEvents } = evaluation;
      if (featureEvents !== undefined && featureEvents.keys.length > 0) {
        logged.push({ environmentId: job.environmentId, receivedAt: Date.now(), items: [], feedbackIds: [], evaluations: featureEvents });
      }
      if (sink === undefined) answers[position] = evaluation.answer;
      else sink(position, evaluation.answer);
      return;
    }
    try {
      const { request, answer } = prepareTrackJob(jobContext, job);
      logged.push(request);
      acknowledged.push({ position, answer });
    } catch (error) {
      answers[position] = failure(error, onFault);
    }
  });
  if (acknowledged.length === 0) {
    // Nobody waits for evaluate events alone: they are held to share an append with the next batches' (the tally
    // lets reads that must see them wait instead).
    if (logged.length > 0) jobContext.heldEvents.hold(logged, onFault);
  } else {
    const committed = jobContext.heldEvents.appendWithHeld(logged);
    for (const { position, answer } of acknowledged) {
      answers[position] = committed.then(
        () => answer,
        (error: unknown) => failure(error, onFault),
      );
    }
  }
  return Promise.all(answers);
}
