import { parseJsonBody } from "../api/json-body.js";
import { BODY_LIMITS, type RouteSpec } from "../api/route.js";
import type { HttpMethod } from "../api/router.js";
import type { Services } from "../services.js";

/**
 * Live feedback prompting is not offered: no prompts are ever pushed, so there is no channel to hand out. Both
 * browser SDKs read `{success: false}` (with status 200) as "no channel" and simply do not open one; an error status
 * would make them log an error on every page load (and the Reflag one retry). The body (`{userId}`) must still be
 * JSON, like every POST.
 */
const PROMPTING_NOT_OFFERED = { status: 200, headers: { "content-type": "application/json" }, body: '{"success":false}' };

/** `POST /feedback/prompting-init`: publishable or secret key. `/feedback/prompt-events` is a tracking route. */
export const PROMPTING_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "POST",
    "/feedback/prompting-init",
    {
      access: "environment",
      bodyLimit: BODY_LIMITS.single,
      cors: true,
      handle: (context) => {
        parseJsonBody(context.request.body, context.request.headers["content-type"]);
        return { ...PROMPTING_NOT_OFFERED, headers: { ...PROMPTING_NOT_OFFERED.headers } };
      },
    },
  ],
];
