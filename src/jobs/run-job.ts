import { errorResponse } from "../http/responses.js";
import { ServiceError } from "../errors/catalogue.js";
import { applyTrackingTogether, canShareTransaction, type TrackingRequest } from "../tracking/index.js";
import type { AnswerTarget } from "../evaluation/index.js";
import type { Job, JobResult } from "./protocol.js";
import { evaluateJob, runEvaluateJob } from "./evaluate-job.js";
import type { JobContext } from "./job-context.js";
import { parseTrackJob, runTrackJob, tracked } from "./track-job.js";

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
  try {
    return job.kind === "evaluate" ? await runEvaluateJob(jobContext, job) : await runTrackJob(jobContext, job);
  } catch (error) {
    return failure(error, onFault);
  }
}

/** Receives an answer the moment it is computed: its body may be a transient view, to be copied at once. */
export type AnswerSink = (position: number, answer: JobResult) => void;

/**
 * Runs jobs that arrived together. Tracking requests are validated one by one (a bad one is answered alone), then
 * those that cannot be refused mid-transaction are stored in one shared transaction, together with the `evaluate`
 * events of `/features/enabled` requests: at fifty concurrent `/event` calls that is one read and one write of each
 * user, company, counter and analytics cell instead of fifty. Every answer still waits for the commit holding its
 * data.
 *
 * With a `sink`, evaluation answers are handed to it as soon as they are written (their bytes straight from the
 * answer writer's buffer, or from the room claimed in `target`, so the sink must copy or keep them at once) and their
 * entries in the result are undefined, unless a later failure replaces them (a commit that failed for
 * `/features/enabled`).
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
  const answers = new Array<Promise<JobResult | undefined>>(jobs.length);
  const shared: { position: number; request: TrackingRequest; answer: JobResult | undefined }[] = [];
  jobs.forEach((job, position) => {
    if (job.kind === "evaluate") {
      let evaluation;
      try {
        evaluation = evaluateJob(jobContext, job, { transient: sink !== undefined, ...(target !== undefined ? { target } : {}) });
      } catch (error) {
        answers[position] = Promise.resolve(failure(error, onFault));
        return;
      }
      const { featureEvents } = evaluation;
      let answer: JobResult | undefined = evaluation.answer;
      if (sink !== undefined) {
        sink(position, answer);
        answer = undefined;
      }
      if (featureEvents === undefined) answers[position] = Promise.resolve(answer);
      else shared.push({ position, answer, request: { environmentId: job.environmentId, items: [], evaluations: featureEvents, receivedAt: Date.now() } });
      return;
    }
    let items;
    try {
      items = parseTrackJob(job);
    } catch (error) {
      answers[position] = Promise.resolve(failure(error, onFault));
      return;
    }
    if (canShareTransaction(items)) shared.push({ position, answer: tracked(), request: { environmentId: job.environmentId, items, receivedAt: job.receivedAt } });
    else answers[position] = runTrackJob(jobContext, job, items).catch((error: unknown) => failure(error, onFault));
  });
  if (shared.length > 0) {
    const outcomes = applyTrackingTogether(
      jobContext.store,
      shared.map((entry) => entry.request),
    );
    shared.forEach((entry, index) => {
      answers[entry.position] = outcomes.then((settled) => {
        const outcome = settled[index]!;
        return outcome.status === "fulfilled" ? entry.answer : failure(outcome.reason, onFault);
      });
    });
  }
  return Promise.all(answers);
}
