import { environmentOf, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { ApiResponse } from "../../http/types.js";
import { waitForFlagState, waitForVersionParam } from "../../features/wait-for-version.js";
import type { Services } from "../core/services.js";

function evaluate(context: RouteContext<Services>, onlyEnabled: boolean): ApiResponse | Promise<ApiResponse> {
  const { environmentId } = environmentOf(context.principal);
  const { services, request } = context;
  const wanted = waitForVersionParam(request.query);
  const acceptEncoding = request.headers["accept-encoding"];
  if (wanted === undefined) return services.evaluation.evaluate(environmentId, request.query, acceptEncoding, onlyEnabled);
  return waitForFlagState(services, environmentId, wanted).then(() => services.evaluation.evaluate(environmentId, request.query, acceptEncoding, onlyEnabled));
}

/** `GET /features/evaluated` and `/features/enabled` (API.md §3): publishable or secret key; the work runs in the executor. */
export const EVALUATION_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["GET", "/features/evaluated", { access: "environment", bodyLimit: 0, cors: true, handle: (context) => evaluate(context, false) }],
  ["GET", "/features/enabled", { access: "environment", bodyLimit: 0, cors: true, handle: (context) => evaluate(context, true) }],
];
