import { environmentOf, type RouteContext, type RouteSpec } from "../api/route.js";
import type { HttpMethod } from "../api/router.js";
import type { ApiResponse } from "../api/types.js";
import { waitForFlagState, waitForVersionParam } from "../features/wait-for-version.js";
import type { Services } from "../services.js";

async function evaluate(context: RouteContext<Services>, onlyEnabled: boolean): Promise<ApiResponse> {
  const { environmentId } = environmentOf(context.principal);
  const { services, request } = context;
  const wanted = waitForVersionParam(request.query);
  if (wanted !== undefined) {
    await waitForFlagState(services.flagStates, environmentId, wanted, () => {
      services.flagStates.poll();
      return services.flagStates.current(environmentId);
    });
  }
  return services.executor.run({
    kind: "evaluate",
    environmentId,
    minFlagStateVersion: services.flagStates.current(environmentId),
    query: request.query,
    onlyEnabled,
  });
}

/** `GET /features/evaluated` and `/features/enabled` (API.md §3): publishable or secret key; the work runs in the executor. */
export const EVALUATION_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["GET", "/features/evaluated", { access: "environment", bodyLimit: 0, cors: true, handle: (context) => evaluate(context, false) }],
  ["GET", "/features/enabled", { access: "environment", bodyLimit: 0, cors: true, handle: (context) => evaluate(context, true) }],
];
