import type { JobContext } from "../job-context.js";
import { runJob, runJobs } from "../run-job.js";
import { evaluateJob } from "../evaluation/evaluate-job.js";
import type { JobResult } from "../protocol.js";
import { countTrackingBatch, overloaded, type Executor, type TrackingStats, type Waiting } from "./executor.js";

/**
 * Runs jobs on the calling thread: the fastest arrangement on small machines, and the only one for a store that lives
 * in this process. Tracking jobs that arrive in one event-loop turn are stored together (runJobs): one transaction,
 * one read and write of each counter, instead of one of each per request.
 */
export function createInlineExecutor(context: JobContext, maxPending: number, onFault: (error: unknown) => void, stats?: TrackingStats): Executor {
  let pending = 0;
  let tracking: Waiting[] = [];

  function flushTracking(): void {
    const batch = tracking;
    tracking = [];
    countTrackingBatch(stats, batch.length);
    runJobs(
      context,
      batch.map((waiting) => waiting.job),
      onFault,
    ).then(
      (results) => {
        pending -= batch.length;
        batch.forEach((waiting, index) => waiting.resolve(results[index]!));
      },
      (error: unknown) => {
        pending -= batch.length;
        for (const waiting of batch) waiting.reject(error);
      },
    );
  }

  return {
    kind: "inline",
    async run(job) {
      if (pending >= maxPending) throw overloaded();
      pending++;
      if (job.kind === "track") {
        return new Promise<JobResult>((resolve, reject) => {
          if (tracking.length === 0) setImmediate(flushTracking);
          tracking.push({ job, resolve, reject });
        });
      }
      try {
        return await runJob(context, job, onFault);
      } finally {
        pending--;
      }
    },
    evaluateNow: (job) => evaluateJob(context, job, { transient: true }).answer,
    pending: () => pending,
    close: async () => {},
  };
}
