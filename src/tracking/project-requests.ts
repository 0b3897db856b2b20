import { ServiceError } from "../errors/catalogue.js";
import type { TrackingItem } from "../schemas/tracking.js";
import type { KvStore } from "../storage/kv.js";
import { TrackingWriter } from "./tracking-writer.js";
import type { TrackingProjections } from "./projections.js";
import type { LoggedEvaluations } from "./evaluations.js";
import { resolveFeedbackReferences } from "./feedback.js";

/**
 * One tracking request as a tracking log holds it (the local `trackingLog` table, or the cluster's JetStream
 * stream): validated in full by the thread that received it, with everything that must come out the same whenever
 * it is projected decided beforehand (the time it arrived, the ids of new feedback).
 */
export interface LoggedRequest {
  environmentId: string;
  receivedAt: number;
  items: TrackingItem[];
  /** Per item: the id a new feedback gets (null for other items and for feedback updates). */
  feedbackIds: (string | null)[];
  /** The `evaluate` events of one `/features/enabled` request (in the form logged before, in older records). */
  evaluations?: LoggedEvaluations;
  /**
   * Cluster mode: the configuration log position the receiving node had applied when it validated the request: a
   * node projects the request only once its own configuration reached it, so the environment, the features and keys
   * the request was checked against exist there too (the two logs are consumed independently).
   */
  configSequence?: number;
}

/**
 * The projector's step, inside a write: derives from logged requests, in log order, everything the service keeps
 * about them (users, companies, memberships, the event logs, analytics cells, survey state). Requests of one batch
 * share one writer per environment, so a user seen a hundred times in a batch is read and written once. A feedback
 * whose feature went away between logging and projecting is dropped alone (every rebuild drops it alike); nothing
 * else can be refused here. Answers the environments whose users or companies changed (evaluation caches to
 * invalidate).
 */
export function projectRequests(
  store: KvStore,
  requests: readonly LoggedRequest[],
  onDropped: (error: ServiceError) => void,
  projections: TrackingProjections,
): Set<string> {
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
    if (!writer) writers.set(request.environmentId, (writer = new TrackingWriter(store, request.environmentId, request.receivedAt, projections)));
    writer.receivedAt = request.receivedAt;
    request.items.forEach((item, index) => {
      if (item.type === "feedback") writer.feedback(item, features!.get(item)!, request.feedbackIds[index] ?? undefined);
      else writer.write(item);
      if (item.type === "user" || item.type === "company") attributesChanged.add(request.environmentId);
    });
    writer.endRequest();
    if (request.evaluations !== undefined) writer.evaluations(request.evaluations);
  }
  for (const writer of writers.values()) writer.finish();
  return attributesChanged;
}
