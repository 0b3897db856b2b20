import { ServiceError } from "../../errors/catalogue.js";
import type { EvaluateJob, Job, JobResult } from "../protocol.js";

/** Runs jobs; `run` rejects only with a retryable OVERLOADED ServiceError when the queue is full. */
export interface Executor {
  readonly kind: "inline" | "pool";
  run(job: Job): Promise<JobResult>;
  /**
   * Inline executors only: evaluates a `/features/evaluated` job at once, on the calling thread. The body may be a
   * transient view (see ApiResponse.transient). Throws a ServiceError for a client's mistake.
   */
  evaluateNow?(job: EvaluateJob): JobResult;
  /** Jobs accepted and not yet answered. */
  pending(): number;
  /** Pools only: the share of the threads' capacity in use (Piscina's utilisation, 0..1). */
  utilization?(): number;
  close(): Promise<void>;
}

/** Tracking requests and the batches they travelled in, as plain numbers (read by GET /metrics). */
export interface TrackingStats {
  batches: number;
  requests: number;
}

export function overloaded(): ServiceError {
  return new ServiceError("OVERLOADED", undefined, undefined, 1);
}

/** Counts a batch that carried `requests` tracking requests (a batch without any is not counted). */
export function countTrackingBatch(stats: TrackingStats | undefined, requests: number): void {
  if (stats === undefined || requests === 0) return;
  stats.batches++;
  stats.requests += requests;
}

/** A job waiting for its answer. */
export interface Waiting {
  job: Job;
  resolve: (result: JobResult) => void;
  reject: (error: unknown) => void;
}
