/**
 * `/api/mcp` (API.md §12): the Model Context Protocol's Streamable HTTP transport for coding agents. Only this path
 * is claimed under `/api`. The caller is a management credential sent as `Authorization: Bearer` — an API token
 * (OAuth-issued ones included) or the admin token; anything else is a 401 whose `WWW-Authenticate` points at the
 * protected-resource metadata, which is where an editor starts the OAuth flow.
 */
import type { ManagementPrincipal } from "../../accounts/principal.js";
import { bearerToken } from "../core/auth.js";
import { BODY_LIMITS, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { ApiResponse } from "../../http/types.js";
import { ServiceError } from "../../errors/catalogue.js";
import type { Services } from "../core/services.js";
import { AUTHORIZE_ROUTES } from "./oauth/authorize-routes.js";
import { OAUTH_METADATA_ROUTES } from "./oauth/metadata-routes.js";
import { REGISTER_ROUTES } from "./oauth/register-route.js";
import { TOKEN_ROUTES } from "./oauth/token-route.js";
import { MCP_PATH, PROTECTED_RESOURCE_PATH, serviceOrigin } from "./service-origin.js";

type Context = RouteContext<Services>;

/** The SDK's server side, loaded on the first MCP request only. */
let serverModule: Promise<typeof import("./mcp-server.js")> | undefined;

function jsonRpcError(status: number, message: string, headers: Record<string, string> = {}): ApiResponse {
  return { status, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }) };
}

/** 401 with the challenge of the MCP authorization spec (RFC 6750 + RFC 9728's `resource_metadata`). */
function challenge(context: Context, error: string | undefined, description: string): ApiResponse {
  const origin = serviceOrigin(context.request, context.services.config.accounts.publicOrigin);
  const parts = [`resource_metadata="${origin}${PROTECTED_RESOURCE_PATH}${MCP_PATH}"`];
  // Quoted-string values: no quote or backslash may end them early.
  if (error) parts.unshift(`error="${error}"`, `error_description="${description.replace(/["\\]/g, "'")}"`);
  return jsonRpcError(401, description, { "www-authenticate": `Bearer ${parts.join(", ")}` });
}

/** The caller, or the 401 to answer. Only a Bearer counts: a browser's session cookie is no credential here. */
function authenticate(context: Context): ManagementPrincipal | ApiResponse {
  if (bearerToken(context.request) === undefined) return challenge(context, undefined, "Send an API token as Authorization: Bearer, or sign in through OAuth.");
  try {
    return context.services.auth.management.authenticate(context.request);
  } catch (error) {
    if (error instanceof ServiceError && error.code === "UNAUTHORIZED") return challenge(context, "invalid_token", error.message);
    if (error instanceof ServiceError && error.code === "FORBIDDEN") return jsonRpcError(403, error.message);
    throw error;
  }
}

/** The front end's request as a web-standard `Request`. */
function toWebRequest(context: Context): Request {
  const { request } = context;
  const url = `${serviceOrigin(request, context.services.config.accounts.publicOrigin)}${request.path}${request.query ? `?${request.query}` : ""}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) headers.set(name, value);
  const body = request.method === "POST" && request.body ? new Uint8Array(request.body) : undefined;
  return new Request(url, { method: request.method, headers, body });
}

async function toApiResponse(response: Response): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  const body = response.body ? new Uint8Array(await response.arrayBuffer()) : "";
  return { status: response.status, headers, body };
}

async function handlePost(context: Context): Promise<ApiResponse> {
  const principal = authenticate(context);
  if (!("kind" in principal)) return principal;
  serverModule ??= import("./mcp-server.js");
  const { serveMcp } = await serverModule;
  return toApiResponse(await serveMcp(toWebRequest(context), context, principal));
}

/**
 * GET (a standalone server-to-client stream) and DELETE (ending a session) have no use without sessions: 405, which
 * the transport's clients expect from a stateless server. Authenticated first, so the 401 challenge comes first.
 */
function noStream(context: Context): ApiResponse {
  const principal = authenticate(context);
  if (!("kind" in principal)) return principal;
  return jsonRpcError(405, "This server is stateless: POST each message.", { allow: "POST" });
}

const mcpRoute = (bodyLimit: number, handle: RouteSpec<Services>["handle"]): RouteSpec<Services> => ({
  // Authentication happens in the handler: its 401 must carry the OAuth challenge header, and the role check is per tool.
  access: "public",
  bodyLimit,
  cors: false,
  // Its tools read evaluation recency and analytics, projected from tracking.
  readsProjection: true,
  handle,
});

export const MCP_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["POST", MCP_PATH, mcpRoute(BODY_LIMITS.admin, handlePost)],
  ["GET", MCP_PATH, mcpRoute(BODY_LIMITS.none, noStream)],
  ["DELETE", MCP_PATH, mcpRoute(BODY_LIMITS.none, noStream)],
  ...OAUTH_METADATA_ROUTES,
  ...REGISTER_ROUTES,
  ...AUTHORIZE_ROUTES,
  ...TOKEN_ROUTES,
];
