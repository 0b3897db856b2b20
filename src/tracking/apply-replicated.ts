import { ServiceError } from "../errors/catalogue.js";
import type { TrackingItem } from "../schemas/tracking.js";
import type { KvStore } from "../storage/kv.js";
import { TrackingWriter, type Evaluations } from "./apply.js";
import { resolveFeedbackReferences } from "./feedback.js";

/**
 * One tracking request as the cluster's tracking log carries it: validated by the node that received it, with
 * everything that must come out the same on every node decided beforehand (the time it arrived, the ids of new
 * feedback).
 */
export interface ReplicatedRequest {
  environmentId: string;
  receivedAt: number;
  items: TrackingItem[];
  /** Per item: the id a new feedback gets (null for other items and for feedback updates). */
  feedbackIds: (string | null)[];
  /** The `evaluate` events of one `/features/enabled` request. */
  evaluations?: Evaluations;
  /**
   * The configuration log position the receiving node had applied when it validated the request: a node applies
   * the request only once its own configuration reached it, so the environment, the features and keys the request
   * was checked against exist there too (the two logs are consumed independently).
   */
  configSequence: number;
}

/**
 * Inside a write: stores requests from the tracking log in order, as `applyTrackingTogether` does for one node's
 * requests. A feedback whose feature went away between publishing and applying is dropped alone (every node drops
 * it, since every node applies the same log in the same order); nothing else can be refused here.
 * Answers the environments whose users or companies changed (evaluation caches to invalidate).
 */
export function writeReplicatedRequests(store: KvStore, requests: readonly ReplicatedRequest[], onDropped: (error: ServiceError) => void): Set<string> {
  const writers = new Map<string, TrackingWriter>();
  const attributesChanged = new Set<string>();
  for (const request of requests) {
    let features;
    if (request.items.some((item) => item.type === "feedback")) {
      try {
        features = resolveFeedbackReferences(store, request.environmentId, request.items);
      } catch (error) {
        if (!(error instanceof ServiceError)) throw error;
        onDropped(error);
        continue;
      }
    }
    let writer = writers.get(request.environmentId);
    if (!writer) writers.set(request.environmentId, (writer = new TrackingWriter(store, request.environmentId, request.receivedAt)));
    writer.receivedAt = request.receivedAt;
    request.items.forEach((item, index) => {
      if (item.type === "feedback") writer.feedback(item, features!.get(item)!, request.feedbackIds[index] ?? undefined);
      else writer.write(item);
      if (item.type === "user" || item.type === "company") attributesChanged.add(request.environmentId);
    });
    if (request.evaluations !== undefined && request.evaluations.results.length > 0) writer.evaluations(request.evaluations);
  }
  for (const writer of writers.values()) writer.finish();
  return attributesChanged;
}
