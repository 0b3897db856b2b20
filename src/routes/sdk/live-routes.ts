import { environmentOf, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { StreamResponse } from "../../http/types.js";
import { ServiceError } from "../../errors/catalogue.js";
import type { Services } from "../core/services.js";
import type { LiveStreamHub } from "../../features/live-stream-hub.js";
import { withPrompts } from "./prompting-routes.js";

/** Response headers of every stream. `x-accel-buffering` stops nginx-style proxies from holding the events back. */
const STREAM_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/**
 * `/sse/client` carries the browser's context as JSON (the Reflag browser SDK's `serializeContext`). Flag updates
 * are per environment; the user's id, when given, also brings that user's feedback prompts (src/surveys). A
 * malformed context is refused, as for any query. Answers the user id, if any.
 */
function userOfContextParam(query: string): string | undefined {
  if (!query.includes("context=")) return undefined;
  const raw = new URLSearchParams(query).get("context");
  if (raw === null || raw === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ServiceError("INVALID_QUERY", undefined, [{ path: "context", message: "must be a JSON object" }]);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ServiceError("INVALID_QUERY", undefined, [{ path: "context", message: "must be a JSON object" }]);
  }
  const id = (parsed as { user?: { id?: unknown } }).user?.id;
  // A user id holding the key separator could alias another user's prompt records: such a user gets no prompts.
  return (typeof id === "string" && id !== "" && !id.includes("\u0000")) || typeof id === "number" ? String(id) : undefined;
}

function openStream(hub: LiveStreamHub, context: RouteContext<Services>): StreamResponse {
  const { environmentId } = environmentOf(context.principal);
  const environment = context.services.tenancy.getEnvironment(environmentId);
  if (!environment) throw new ServiceError("UNAUTHORIZED", "The key's environment no longer exists.");
  return hub.open(
    { environmentId, keyId: `${context.principal.kind}:${environmentId}`, currentVersion: environment.flagStateVersion },
    { ...STREAM_HEADERS },
  );
}

/**
 * `GET /sse/server` (secret key; the Reflag node SDK's `flagsPushUrl`) and `GET /sse/client` (publishable or secret;
 * the Reflag browser SDK's live updates), API.md §5. The handlers stay synchronous: see `LiveStreamHub.open`.
 */
export const LIVE_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["GET", "/sse/server", { access: "secret", bodyLimit: 0, cors: true, handle: (context) => openStream(context.services.live, context) }],
  [
    "GET",
    "/sse/client",
    {
      access: "environment",
      bodyLimit: 0,
      cors: true,
      handle: (context) => {
        const userId = userOfContextParam(context.request.query);
        const stream = openStream(context.services.live, context);
        return withPrompts(context.services, environmentOf(context.principal).environmentId, userId, stream);
      },
    },
  ],
];
