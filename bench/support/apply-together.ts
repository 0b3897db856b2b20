import type { KvStore } from "../../src/storage/kv.js";
import { applyTracking, canShareTransaction, recordEvaluations, type TrackingRequest } from "./direct-tracking.js";
import { projectRequests } from "../../src/tracking/project-requests.js";
import { TRACKING_PROJECTIONS } from "../../src/serving/tracking-projections.js";

/**
 * Like applyTracking for several requests in one transaction, through the projector's own step (projectRequests),
 * for tests and the bench's baselines that store tracking without a log: as if applied one after another in the
 * given order, the records they touch (users, companies, sequence counters, analytics cells) read and written once
 * for all of them. Only for requests `canShareTransaction` accepts. Should the transaction fail anyway (a fault, not
 * a client's mistake), each request is retried alone, so one request's fault cannot take the others with it; the
 * answer per request is then that of `applyTracking`.
 */
export async function applyTrackingTogether(store: KvStore, requests: readonly TrackingRequest[]): Promise<PromiseSettledResult<void>[]> {
  try {
    await store.write(() => {
      if (!requests.every((request) => canShareTransaction(request.items))) throw new TypeError("feedback cannot share a transaction");
      // Never logged, so no feedback ids were decided; no feedback comes this way, so nothing can be dropped.
      projectRequests(
        store,
        requests.map((request) => ({ ...request, items: [...request.items], feedbackIds: request.items.map(() => null) })),
        (error) => {
          throw error;
        },
        TRACKING_PROJECTIONS,
      );
    });
    return requests.map(() => ({ status: "fulfilled", value: undefined }));
  } catch {
    return Promise.allSettled(
      requests.map(async (request) => {
        await applyTracking(store, request.environmentId, request.items, request.receivedAt);
        if (request.evaluations !== undefined) await recordEvaluations(store, request.environmentId, request.evaluations, request.receivedAt);
      }),
    );
  }
}
