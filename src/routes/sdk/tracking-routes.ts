import { BODY_LIMITS, environmentOf, type RouteContext, type RouteSpec } from "../kit/route.js";
import type { HttpMethod } from "../kit/router.js";
import type { ApiResponse } from "../../http/types.js";
import type { TrackingCall } from "../../schemas/tracking.js";
import type { Services } from "../kit/services.js";
import { promptingAfterTracking } from "./prompting-routes.js";
import { trackReplicated } from "./replicated-tracking.js";

/** The calls that can change stored user or company attributes, which evaluation reads as remote context. */
const CHANGES_ATTRIBUTES: ReadonlySet<TrackingCall> = new Set(["user", "company", "bulk"]);

function track(call: TrackingCall) {
  const changesAttributes = CHANGES_ATTRIBUTES.has(call);
  return async (context: RouteContext<Services>): Promise<ApiResponse> => {
    const { environmentId } = environmentOf(context.principal);
    const { cluster } = context.services;
    // Cluster mode: through the replicated tracking log; caches learn of changes when the log is applied here.
    if (cluster !== undefined) return trackReplicated(cluster, context.services.store, environmentId, call, context.request.body, context.request.headers["content-type"]);
    try {
      const response = await context.services.executor.run({
        kind: "track",
        environmentId,
        call,
        body: context.request.body,
        contentType: context.request.headers["content-type"],
        receivedAt: Date.now(),
      });
      // Committed: a user with a feedback prompt stream open may qualify for a survey now.
      if (response.status === 200) promptingAfterTracking(context.services, environmentId, call, context.request.body);
      return response;
    } finally {
      // After the commit (or the refusal): evaluation answers cached before it may no longer hold.
      if (changesAttributes) context.services.evaluationCache.attributesChanged(environmentId);
    }
  };
}

const front = (call: TrackingCall, bodyLimit: number): RouteSpec<Services> => ({ access: "environment", bodyLimit, cors: true, handle: track(call) });
const trackingApi = (call: TrackingCall, bodyLimit: number): RouteSpec<Services> => ({ access: "tracking-path", bodyLimit, cors: true, handle: track(call) });

/** Every tracking call of API.md §4 on the front-facing API and the tracking API. */
export const TRACKING_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["POST", "/user", front("user", BODY_LIMITS.single)],
  ["POST", "/company", front("company", BODY_LIMITS.single)],
  ["POST", "/event", front("event", BODY_LIMITS.single)],
  ["POST", "/feedback", front("feedback", BODY_LIMITS.single)],
  // An array of feature events is a batch like /bulk.
  ["POST", "/features/events", front("feature-events", BODY_LIMITS.bulk)],
  ["POST", "/bulk", front("bulk", BODY_LIMITS.bulk)],
  ["POST", "/feedback/prompt-events", front("prompt-event", BODY_LIMITS.single)],
  ["POST", "/:trackingKey/user", trackingApi("user", BODY_LIMITS.single)],
  ["POST", "/:trackingKey/company", trackingApi("company", BODY_LIMITS.single)],
  ["POST", "/:trackingKey/event", trackingApi("event", BODY_LIMITS.single)],
  ["POST", "/:trackingKey/feedback", trackingApi("feedback", BODY_LIMITS.single)],
  ["POST", "/:trackingKey/bulk", trackingApi("bulk", BODY_LIMITS.bulk)],
  // `@bucketco/tracking-sdk` 2.4.0 reports its feedback prompts' events here.
  ["POST", "/:trackingKey/feedback/prompt-events", trackingApi("prompt-event", BODY_LIMITS.single)],
];
