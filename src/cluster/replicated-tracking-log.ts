import { ok } from "../../http/responses.js";
import type { ApiResponse } from "../../http/types.js";
import type { ClusterNode } from "../../cluster/cluster-node.js";
import { evaluateJob } from "../../jobs/evaluate-job.js";
import type { JobContext } from "../../jobs/job-context.js";
import { parseTrackJob, tracked } from "../../jobs/track-job.js";
import type { EvaluateJob, JobResult } from "../../jobs/protocol.js";
import type { TrackingCall } from "../../schemas/tracking.js";
import type { KvStore } from "../../storage/kv.js";
import { newFeedbackId } from "../../tenancy/identifiers.js";
import { resolveFeedbackReferences } from "../../tracking/feedback.js";

/** How long a feedback update waits for this node's own earlier tracking writes to be applied here. */
const OWN_WRITES_WAIT_MS = 5_000;

/**
 * A tracking call in cluster mode: validated here as a whole (a 4xx names the field, as standalone), then published
 * to the tracking log; answered 200 once JetStream acknowledged the message holding it. Every node, this one
 * included, stores it by applying the log. What must be equal everywhere is decided now: the arrival time and the
 * ids of new feedback.
 */
export async function trackReplicated(
  cluster: ClusterNode,
  store: KvStore,
  environmentId: string,
  call: TrackingCall,
  body: Uint8Array | null,
  contentType: string | undefined,
): Promise<ApiResponse> {
  const receivedAt = Date.now();
  // The environment's stream set: an unpinned app's on a region's node that serves them goes to the unregioned one.
  const set = cluster.trackingSet(environmentId);
  const items = [...parseTrackJob({ kind: "track", environmentId, call, body, contentType, receivedAt })];
  let feedbackIds: (string | null)[] = items.map(() => null);
  if (items.some((item) => item.type === "feedback")) {
    // An update names a feedback that may have been created through this node a moment ago: read-your-writes,
    // so wait (briefly) until this node applied what it published itself.
    if (items.some((item) => item.type === "feedback" && item.feedbackId !== undefined)) {
      await set.applier.appliedUpTo(set.publisher.lastPublished, OWN_WRITES_WAIT_MS);
    }
    // Refused here with the standalone answer (400 UNKNOWN_FEATURE, 404 for an unknown feedback id) against this
    // node's copy of the data.
    resolveFeedbackReferences(store, environmentId, items);
    feedbackIds = items.map((item) => (item.type === "feedback" && item.feedbackId === undefined ? newFeedbackId() : null));
  }
  await set.publisher.submit({ environmentId, receivedAt, items, feedbackIds, configSequence: set.management.applied });
  if (call === "feedback") {
    const item = items[0]!;
    return ok({ feedbackId: item.type === "feedback" && item.feedbackId !== undefined ? item.feedbackId : feedbackIds[0] });
  }
  const answer = tracked();
  return { status: answer.status, headers: answer.headers, body: answer.body };
}

/**
 * `/features/enabled` in cluster mode: evaluated here, on the main thread, and its `evaluate` feature events
 * published to the tracking log like any tracking call (every node stores them, so event logs and their cursors
 * stay the same everywhere). Answered at once: an evaluation is a read, not an acknowledgement (API.md §4), so a
 * publish that fails loses these events (the publisher logs it), never the answer.
 */
export function evaluateEnabledReplicated(cluster: ClusterNode, jobContext: JobContext, job: EvaluateJob): JobResult {
  const { answer, featureEvents } = evaluateJob(jobContext, job);
  if (featureEvents !== undefined && featureEvents.keys.length > 0) {
    const set = cluster.trackingSet(job.environmentId);
    set.publisher.submit({ environmentId: job.environmentId, receivedAt: Date.now(), items: [], feedbackIds: [], evaluations: featureEvents, configSequence: set.management.applied }).catch(() => undefined);
  }
  return answer;
}
