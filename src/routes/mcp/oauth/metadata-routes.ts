/**
 * Discovery for editors that arrive without a token (the MCP authorization spec): RFC 9728 protected-resource
 * metadata naming this service as the authorization server, and RFC 8414 authorization-server metadata.
 */
import { ok, withHeaders } from "../../../http/responses.js";
import { BODY_LIMITS, type RouteContext, type RouteSpec } from "../../core/route.js";
import type { HttpMethod } from "../../core/router.js";
import type { ApiResponse } from "../../../http/types.js";
import type { Services } from "../../core/services.js";
import { MCP_PATH, PROTECTED_RESOURCE_PATH, serviceOrigin } from "../service-origin.js";
import { AUTHORIZATION_SERVER_METADATA_PATH, OAUTH_PATHS } from "./endpoints.js";

type Context = RouteContext<Services>;

/** A plain JSON document (OAuth metadata is not wrapped in our `{success}` envelope), readable cross-origin. */
function document(body: Record<string, unknown>): ApiResponse {
  const { body: _envelope, ...response } = ok();
  return withHeaders({ ...response, body: JSON.stringify(body) }, { "cache-control": "no-store", "access-control-allow-origin": "*" });
}

const originOf = (context: Context) => serviceOrigin(context.request, context.services.config.accounts.publicOrigin);

function protectedResource(context: Context): ApiResponse {
  const origin = originOf(context);
  return document({
    resource: `${origin}${MCP_PATH}`,
    authorization_servers: [origin],
    bearer_methods_supported: ["header"],
    resource_name: "Switchyard feature flags (MCP)",
  });
}

function authorizationServer(context: Context): ApiResponse {
  const origin = originOf(context);
  return document({
    issuer: origin,
    authorization_endpoint: `${origin}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${origin}${OAUTH_PATHS.token}`,
    registration_endpoint: `${origin}${OAUTH_PATHS.register}`,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
  });
}

const publicRoute = (handle: RouteSpec<Services>["handle"]): RouteSpec<Services> => ({ access: "public", bodyLimit: BODY_LIMITS.none, cors: false, handle });

export const OAUTH_METADATA_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  // Path-aware (RFC 9728 §3.1: the resource's path after the well-known name) and the root form older clients try.
  ["GET", `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`, publicRoute(protectedResource)],
  ["GET", PROTECTED_RESOURCE_PATH, publicRoute(protectedResource)],
  ["GET", AUTHORIZATION_SERVER_METADATA_PATH, publicRoute(authorizationServer)],
];
