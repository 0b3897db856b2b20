import type { EvaluateJob, JobResult, TrackJob } from "../protocol.js";

/**
 * Where acknowledged tracking goes: the local append log (the trackingLog table, written by the executor's jobs and
 * projected on this node) or, in cluster mode, the replicated JetStream log that every node applies. The composition
 * root chooses one; routes and evaluation serving hold only this port.
 */
export interface TrackingLog {
  /**
   * Validates one tracking request as a whole, decides the ids of its new feedback and logs it: its 200 once the log
   * holds it, or the request's 4xx. Never answers 200 before the call is durable.
   */
  track(job: TrackJob): Promise<JobResult>;
  /**
   * `/features/enabled`: evaluates the job and logs its `evaluate` feature events. Answered without waiting for those
   * events to be durable: an evaluation is a read, not an acknowledgement (API.md §4).
   */
  evaluateEnabled(job: EvaluateJob): JobResult | Promise<JobResult>;
}
