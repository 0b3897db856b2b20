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
  const flagStateVersion = services.flagStates.current(environmentId);
  // `/features/enabled` records feature events on every call, so only `/features/evaluated` is answered from memory.
  const cache = onlyEnabled ? undefined : services.evaluationCache;
  const cached = cache?.get(environmentId, request.query, flagStateVersion);
  if (cached) return { status: cached.status, headers: { ...cached.headers }, body: cached.body };
  const attributeEpoch = services.evaluationCache.attributeEpoch(environmentId);
  const answer = await services.executor.run({ kind: "evaluate", environmentId, minFlagStateVersion: flagStateVersion, query: request.query, onlyEnabled });
  cache?.put(environmentId, request.query, flagStateVersion, attributeEpoch, { status: answer.status, body: answer.body, headers: { ...answer.headers } });
  return answer;
}

/** `GET /features/evaluated` and `/features/enabled` (API.md §3): publishable or secret key; the work runs in the executor. */
export const EVALUATION_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["GET", "/features/evaluated", { access: "environment", bodyLimit: 0, cors: true, handle: (context) => evaluate(context, false) }],
  ["GET", "/features/enabled", { access: "environment", bodyLimit: 0, cors: true, handle: (context) => evaluate(context, true) }],
];
