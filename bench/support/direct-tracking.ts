/**
 * Tracking written straight into a store, without the tracking log: for tests, tools and benchmarks that need stored
 * tracking data. The service logs every call first and the projector applies it (src/tracking/projector.ts); both
 * write through TrackingWriter, so what is stored is the same.
 */
import type { TrackingItem } from "../../src/schemas/tracking.js";
import type { KvStore } from "../../src/storage/kv.js";
import { ServiceError } from "../../src/errors/catalogue.js";
import { newFeedbackId } from "../../src/tenancy/identifiers.js";
import { resolveFeedbackReferences } from "../../src/tracking/feedback.js";
import { evaluationCount, type LoggedEvaluations } from "../../src/tracking/evaluations.js";
import { TrackingWriter } from "../../src/tracking/tracking-writer.js";
import { TRACKING_PROJECTIONS } from "../../src/serving/tracking-projections.js";

/** What a tracking request answers besides success: the id of each feedback item, in request order. */
export interface TrackingResult {
  feedbackIds: string[];
}

/**
 * Projects the items of one tracking request straight into the store, all or nothing, without the tracking log: for
 * tests, tools and benchmarks that need stored tracking data (the service logs every call first and the projector
 * applies it, projector.ts; both write through TrackingWriter). References are checked first (a feedback's feature, a
 * feedback id to update) and answered as ServiceErrors (UNKNOWN_FEATURE, NOT_FOUND) before anything is written; then
 * every write happens in one transaction, which resolves once committed. `receivedAt` (epoch ms) is stored on
 * appended entries and stands in for absent timestamps.
 */
export async function applyTracking(
  store: KvStore,
  environmentId: string,
  items: readonly TrackingItem[],
  receivedAt: number,
): Promise<TrackingResult> {
  if (items.length === 0) return { feedbackIds: [] };
  const hasFeedback = items.some((item) => item.type === "feedback");
  if (hasFeedback) checkReferencesBeforeWriting(store, environmentId, items);
  return store.write(() => {
    // Checked again inside the transaction, which sees every commit: the answer above may be from an older snapshot
    // and a feature may have been archived since. A throw here rolls back this request alone.
    const features = hasFeedback ? resolveFeedbackReferences(store, environmentId, items) : undefined;
    const writer = new TrackingWriter(store, environmentId, receivedAt, TRACKING_PROJECTIONS);
    const feedbackIds: string[] = [];
    for (const item of items) {
      if (item.type === "feedback") {
        const feature = features?.get(item);
        if (!feature) throw new ServiceError("UNKNOWN_FEATURE");
        feedbackIds.push(writer.feedback(item, feature, item.feedbackId === undefined ? newFeedbackId() : undefined));
      } else writer.write(item);
    }
    writer.endRequest();
    writer.finish();
    return { feedbackIds };
  });
}

/** One request's items for `applyTrackingTogether`. */
export interface TrackingRequest {
  environmentId: string;
  items: readonly TrackingItem[];
  receivedAt: number;
  /** The `evaluate` events of one `/features/enabled` request, stored as one group. */
  evaluations?: LoggedEvaluations;
}

/**
 * Whether a request's items can share a transaction with other requests' items: only feedback can be refused once
 * the transaction has begun (its feature may have been archived meanwhile), everything else always applies.
 */
export function canShareTransaction(items: readonly TrackingItem[]): boolean {
  return !items.some((item) => item.type === "feedback");
}

/**
 * Projects the `evaluate` events of one `/features/enabled` request (they share one context) as one group of log
 * entries, without the tracking log (tests and benchmarks); resolves once committed.
 */
export async function recordEvaluations(store: KvStore, environmentId: string, evaluations: LoggedEvaluations, receivedAt: number): Promise<void> {
  if (evaluationCount(evaluations) === 0) return;
  await store.write(() => {
    const writer = new TrackingWriter(store, environmentId, receivedAt, TRACKING_PROJECTIONS);
    writer.evaluations(evaluations);
    writer.finish();
  });
}

/**
 * Reads outside the write lock so that a request doomed by a bad reference never queues behind writers. A miss is
 * retried once on a fresh snapshot: the feedback id being updated may have been committed by another thread a
 * moment ago, after this thread's read snapshot was taken.
 */
function checkReferencesBeforeWriting(store: KvStore, environmentId: string, items: readonly TrackingItem[]): void {
  try {
    resolveFeedbackReferences(store, environmentId, items);
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    store.refresh();
    resolveFeedbackReferences(store, environmentId, items);
  }
}

