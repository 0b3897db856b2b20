import * as v from "valibot";
import { parseJsonBody, SDK_BODY } from "../../schemas/json-body.js";
import { ok } from "../../http/responses.js";
import { BODY_LIMITS, environmentOf, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { ApiResponse } from "../../http/types.js";
import { ServiceError } from "../../errors/catalogue.js";
import { parseOrThrow } from "../../schemas/issues.js";
import type { Services } from "../core/services.js";
import { OptInBody } from "./opt-in-body.js";
import { ANONYMOUS_ACTOR } from "../../accounts/principal.js";
import { newEnvelope } from "../../management/envelope.js";

async function setOptIn(context: RouteContext<Services>): Promise<ApiResponse> {
  const { appId, environmentId } = environmentOf(context.principal);
  const { services, request } = context;
  const body = parseOrThrow(v.safeParse, OptInBody, parseJsonBody(request.body, request.headers["content-type"], SDK_BODY));
  const id = body.context[body.scope]?.id;
  if (id === undefined || id === null) {
    throw new ServiceError("INVALID_BODY", undefined, [{ path: `context.${body.scope}.id`, message: `is required for scope "${body.scope}"` }]);
  }
  // Through the management log (applied here standalone, replicated in cluster mode); its observers announce the
  // new flagStateVersion to live streams on every node.
  const outcome = await services.management.submit({
    ...newEnvelope(ANONYMOUS_ACTOR, null),
    type: "opt-in.set",
    environmentId,
    appId,
    featureKey: body.key,
    scope: body.scope,
    entityId: String(id),
    optedIn: body.optedIn,
  });
  if (!outcome.ok) throw ServiceError.fromData(outcome.error);
  return ok({ flagStateVersion: outcome.value.flagStateVersion });
}

/** `POST /flags/opt-in` (API.md §5): publishable or secret key. */
export const OPT_IN_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["POST", "/flags/opt-in", { access: "environment", bodyLimit: BODY_LIMITS.single, cors: true, handle: setOptIn }],
];
