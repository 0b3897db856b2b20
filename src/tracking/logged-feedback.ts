import { ServiceError } from "../errors/catalogue.js";
import type { TrackingItem } from "../schemas/tracking.js";
import type { KvStore } from "../storage/kv.js";
import { newFeedbackId } from "../tenancy/identifiers.js";
import { feedbackSequence, resolveFeedbackReferences } from "./feedback.js";
import { projectedUpTo, trackingLogRecords } from "./tracking-log-table.js";

/**
 * Checks a request's feedback references before it is logged (a 400 UNKNOWN_FEATURE or 404 NOT_FOUND, as API.md §4
 * answers them) and decides the ids of new feedback, which the 200 carries. A feedback id is known once its
 * creation is logged: one acknowledged a moment ago and not yet projected is found in the log's unprojected tail.
 * Answers, per item, the id a new feedback gets (null for other items and for updates).
 */
export function prepareFeedback(store: KvStore, environmentId: string, items: readonly TrackingItem[]): (string | null)[] {
  if (!items.some((item) => item.type === "feedback")) return items.map(() => null);
  try {
    resolveFeedbackReferences(store, environmentId, items);
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    // This thread's snapshot may predate the commit that created the feature or feedback: look again at the latest.
    store.refresh();
    try {
      resolveFeedbackReferences(store, environmentId, items);
    } catch (again) {
      if (!(again instanceof ServiceError) || again.code !== "NOT_FOUND" || !allLogged(store, environmentId, items)) throw again;
    }
  }
  return items.map((item) => (item.type === "feedback" && item.feedbackId === undefined ? newFeedbackId() : null));
}

/** Whether every feedback id the items update that is not projected yet was created in the unprojected tail. */
function allLogged(store: KvStore, environmentId: string, items: readonly TrackingItem[]): boolean {
  const missing = new Set<string>();
  for (const item of items) {
    if (item.type === "feedback" && item.feedbackId !== undefined && feedbackSequence(store, environmentId, item.feedbackId) === undefined) missing.add(item.feedbackId);
  }
  for (const record of trackingLogRecords(store, projectedUpTo(store))) {
    for (const request of record.requests) {
      if (request.environmentId !== environmentId) continue;
      request.feedbackIds.forEach((id) => id !== null && missing.delete(id));
    }
    if (missing.size === 0) return true;
  }
  return missing.size === 0;
}
