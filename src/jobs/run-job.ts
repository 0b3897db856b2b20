import { errorResponse } from "../api/responses.js";
import { ServiceError } from "../errors/catalogue.js";
import type { Job, JobResult } from "../workers/protocol.js";
import { runEvaluateJob } from "./evaluate-job.js";
import type { JobContext } from "./job-context.js";
import { runTrackJob } from "./track-job.js";

function errorResult(error: ServiceError): JobResult {
  const response = errorResponse(error);
  return { status: response.status, body: response.body as string, headers: response.headers ?? {} };
}

/** Runs one job to a ready answer; a job never rejects (client mistakes become 4xx, faults a logged 500). */
export async function runJob(jobContext: JobContext, job: Job, onFault: (error: unknown) => void): Promise<JobResult> {
  try {
    return job.kind === "evaluate" ? await runEvaluateJob(jobContext, job) : await runTrackJob(jobContext, job);
  } catch (error) {
    if (error instanceof ServiceError) return errorResult(error);
    onFault(error);
    return errorResult(new ServiceError("INTERNAL"));
  }
}
