import { BODY_LIMITS, environmentOf, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { ApiResponse } from "../../http/types.js";
import type { TrackingCall } from "../../schemas/tracking.js";
import type { Services } from "../core/services.js";
import { promptingAfterTracking } from "./prompting-routes.js";
import { mayChangeAttributes } from "../../tracking/attribute-writes.js";

/** A user with a feedback prompt stream open may qualify for a survey once the call is projected. */
function promptWhenProjected(services: Services, environmentId: string, call: TrackingCall, body: Uint8Array | null): void {
  if (!services.prompting.hub.hasStreams(environmentId)) return;
  const prompt = () => promptingAfterTracking(services, environmentId, call, body);
  const waiting = services.projection.caughtUp();
  if (waiting === undefined) prompt();
  else waiting.then(prompt, () => undefined);
}

function track(call: TrackingCall) {
  return async (context: RouteContext<Services>): Promise<ApiResponse> => {
    const { environmentId } = environmentOf(context.principal);
    const { services } = context;
    // Past the lag bound a call is refused (retryable) rather than queued behind an unbounded backlog; short of it,
    // a batch may be held until the projection caught up a little.
    const held = services.projection.admit(call === "bulk" || call === "feature-events");
    if (held !== undefined) await held;
    const response = await services.trackingLog.track({
      kind: "track",
      environmentId,
      call,
      body: context.request.body,
      contentType: context.request.headers["content-type"],
      receivedAt: Date.now(),
    });
    if (response.status === 200) {
      // Evaluations in this environment wait for attribute calls acknowledged before them (remote context reads
      // what its caller was told is stored).
      if (mayChangeAttributes(call, context.request.body)) services.projection.attributeWrites.acknowledged(environmentId);
      promptWhenProjected(services, environmentId, call, context.request.body);
    }
    return response;
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
