/**
 * Dynamic client registration (RFC 7591) for editors: public clients only (no secret; PKCE protects the code), with
 * redirect URIs an editor can receive on — https anywhere, http only on the loopback address, or an app's own scheme
 * (`cursor://…`, `vscode://…`). Registering grants nothing by itself: a member still has to sign in and approve.
 */
import * as v from "valibot";
import { parseJsonBody } from "../../../schemas/json-body.js";
import { BODY_LIMITS, type RouteContext, type RouteSpec } from "../../core/route.js";
import type { HttpMethod } from "../../core/router.js";
import type { ApiResponse } from "../../../http/types.js";
import { ServiceError } from "../../../errors/catalogue.js";
import { envelopeFor, submitChange } from "../../core/submit.js";
import { ANONYMOUS_ACTOR } from "../../../accounts/principal.js";
import type { Services } from "../../core/services.js";
import { randomBase62 } from "../../../tenancy/identifiers.js";
import { OAUTH_PATHS } from "./endpoints.js";
import { oauthError, oauthJson } from "./oauth-responses.js";

/** Registrations allowed per client address per window: enough for any editor, too few to fill the store. */
const MAX_REGISTRATIONS = 20;
const WINDOW_MS = 10 * 60_000;
const recent = new Map<string, number[]>();

function allowRegistration(address: string, now: number): boolean {
  const times = (recent.get(address) ?? []).filter((time) => now - time < WINDOW_MS);
  if (times.length >= MAX_REGISTRATIONS) return false;
  times.push(now);
  recent.set(address, times);
  if (recent.size > 10_000) recent.clear();
  return true;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);
/** Schemes a browser must never be sent to with a code. */
const FORBIDDEN_SCHEMES = new Set(["javascript:", "data:", "file:", "blob:", "vbscript:", "about:"]);

export function isAcceptableRedirectUri(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  if (url.hash !== "" || FORBIDDEN_SCHEMES.has(url.protocol)) return false;
  if (url.protocol === "https:") return true;
  if (url.protocol === "http:") return LOOPBACK.has(url.hostname);
  // An app's own scheme (reverse-DNS or a product name), as desktop editors register.
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol);
}

const RegistrationBody = v.looseObject({
  redirect_uris: v.pipe(v.array(v.pipe(v.string(), v.maxLength(2048))), v.minLength(1), v.maxLength(10)),
  client_name: v.optional(v.pipe(v.string(), v.maxLength(200))),
  grant_types: v.optional(v.array(v.string())),
  response_types: v.optional(v.array(v.string())),
  token_endpoint_auth_method: v.optional(v.string()),
});

async function register(context: RouteContext<Services>): Promise<ApiResponse> {
  if (!allowRegistration(context.request.remoteAddress(), Date.now())) {
    return { ...oauthError(429, "slow_down", "Too many registrations from this address; try again later."), headers: { "content-type": "application/json", "retry-after": "600" } };
  }
  let input: unknown;
  try {
    input = parseJsonBody(context.request.body, context.request.headers["content-type"]);
  } catch (error) {
    if (error instanceof ServiceError) return oauthError(400, "invalid_client_metadata", error.message);
    throw error;
  }
  const parsed = v.safeParse(RegistrationBody, input);
  if (!parsed.success) return oauthError(400, "invalid_client_metadata", `redirect_uris: 1 to 10 URIs are required (${parsed.issues[0].message}).`);
  const body = parsed.output;
  const bad = body.redirect_uris.find((uri) => !isAcceptableRedirectUri(uri));
  if (bad !== undefined) return oauthError(400, "invalid_redirect_uri", `Not an acceptable redirect URI: ${bad.slice(0, 200)} (https, http on the loopback address, or an app scheme; no fragment).`);
  if (body.grant_types && body.grant_types.some((grant) => grant !== "authorization_code" && grant !== "refresh_token")) {
    return oauthError(400, "invalid_client_metadata", "grant_types: only authorization_code is offered.");
  }
  if (body.token_endpoint_auth_method !== undefined && body.token_endpoint_auth_method !== "none") {
    return oauthError(400, "invalid_client_metadata", "token_endpoint_auth_method: only none (a public client with PKCE) is offered.");
  }
  const envelope = envelopeFor(context, ANONYMOUS_ACTOR);
  const client = { id: `mcp_${randomBase62(24)}`, name: (body.client_name ?? "").trim() || "An MCP client", redirectUris: body.redirect_uris, createdAt: envelope.at };
  await submitChange(context, "oauth-client.register", { client }, envelope);
  return oauthJson(201, {
    client_id: client.id,
    client_id_issued_at: Math.floor(Date.parse(client.createdAt) / 1000),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: ["authorization_code"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
  });
}

export const REGISTER_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["POST", OAUTH_PATHS.register, { access: "public", bodyLimit: BODY_LIMITS.single, cors: true, handle: register }],
];
