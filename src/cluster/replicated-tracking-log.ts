import type { EvaluateJob, JobResult, TrackJob } from "../serving/protocol.js";
import { evaluateJob } from "../serving/evaluation/evaluate-job.js";
import { feedbackUpdates, prepareTrackedItems, parseTrackJob } from "../serving/tracking/track-job.js";
import type { TrackingLog } from "../serving/tracking/tracking-log.js";
import type { KvStore } from "../storage/kv.js";
import type { ClusterNode } from "./cluster-node.js";

/** How long a feedback update waits for this node's own earlier tracking writes to be applied here. */
const OWN_WRITES_WAIT_MS = 5_000;

/**
 * The tracking log in cluster mode: the environment's JetStream tracking stream. A call is validated here as a whole
 * (a 4xx names the field, as alone), then published; answered 200 once JetStream acknowledged the message holding it.
 * Every node, this one included, stores it by applying the log. What must be equal everywhere is decided now: the
 * arrival time and the ids of new feedback.
 */
export class ReplicatedTrackingLog implements TrackingLog {
  constructor(
    private readonly cluster: ClusterNode,
    private readonly store: KvStore,
  ) {}

  async track(job: TrackJob): Promise<JobResult> {
    // The environment's stream set: an unpinned app's on a region's node that serves them goes to the unregioned one.
    const set = this.cluster.trackingSet(job.environmentId);
    const items = parseTrackJob(job);
    // An update names a feedback that may have been created through this node a moment ago: read-your-writes, so
    // wait (briefly) until this node applied what it published itself.
    if (feedbackUpdates(items)) await set.applier.appliedUpTo(set.publisher.lastPublished, OWN_WRITES_WAIT_MS);
    const { request, answer } = prepareTrackedItems(this.store, job, items);
    await set.publisher.submit({ ...request, configSequence: set.management.applied });
    return answer;
  }

  /**
   * Evaluated here, on the main thread, and its `evaluate` feature events published to the tracking log like any
   * tracking call (every node stores them, so event logs and their cursors stay the same everywhere). A publish that
   * fails loses these events (the publisher logs it), never the answer.
   */
  evaluateEnabled(job: EvaluateJob): JobResult {
    const { answer, featureEvents } = evaluateJob(this.cluster.jobContext, job);
    if (featureEvents !== undefined && featureEvents.keys.length > 0) {
      const set = this.cluster.trackingSet(job.environmentId);
      set.publisher.submit({ environmentId: job.environmentId, receivedAt: Date.now(), items: [], feedbackIds: [], evaluations: featureEvents, configSequence: set.management.applied }).catch(() => undefined);
    }
    return answer;
  }
}
