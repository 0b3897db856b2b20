import { errorFor } from "./responses.js";
import type { ApiCore, ApiRequest, ApiResponse, RouteDecision, StreamResponse } from "./types.js";

/** What a front end sends when a handler throws or rejects despite the core's own guard: a bare 500 envelope. */
export const INTERNAL_ERROR: ApiResponse = errorFor("INTERNAL");

/** The 413 for a body over the route's limit, in the route's own error body when it has one. */
export function payloadTooLarge(core: ApiCore, decision: RouteDecision, request: Pick<ApiRequest, "headers" | "method">): ApiResponse {
  return decision.refuseTooLarge?.(request) ?? core.reject("PAYLOAD_TOO_LARGE", request);
}

/**
 * Runs a route decision for a front end and hands the answer to `deliver`, synchronously when the handler answered
 * synchronously (so a uWebSockets.js response is still corked). Never throws.
 */
export function runDecision(
  decision: RouteDecision,
  request: ApiRequest,
  deliver: (response: ApiResponse | StreamResponse) => void,
): void {
  let outcome: ReturnType<RouteDecision["handle"]>;
  try {
    outcome = decision.handle(request);
  } catch {
    deliver(INTERNAL_ERROR);
    return;
  }
  if (outcome instanceof Promise) outcome.then(deliver, () => deliver(INTERNAL_ERROR));
  else deliver(outcome);
}
