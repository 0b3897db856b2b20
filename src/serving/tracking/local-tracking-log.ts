import type { EvaluateJob, JobResult, TrackJob } from "../protocol.js";
import type { TrackingLog } from "./tracking-log.js";
import type { Executor } from "../workers/executor.js";

/**
 * The tracking log of a node that runs alone: the executor's jobs append to the trackingLog table (one record per
 * batch of requests, serving/run-job.ts), and the projector, told of each append here, projects it on this node.
 */
export class LocalTrackingLog implements TrackingLog {
  constructor(
    private readonly executor: Executor,
    private readonly projection: { appended(): void },
  ) {}

  async track(job: TrackJob): Promise<JobResult> {
    const answer = await this.executor.run(job);
    // Logged: the projector applies it (and tells the evaluation cache of changed attributes when it has).
    if (answer.status === 200) this.projection.appended();
    return answer;
  }

  evaluateEnabled(job: EvaluateJob): Promise<JobResult> {
    // Answered before its `evaluate` events are committed: the projector is told they are on their way.
    return this.executor.run(job).then((answer) => {
      this.projection.appended();
      return answer;
    });
  }
}
