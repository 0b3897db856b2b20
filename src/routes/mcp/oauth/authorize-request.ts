/**
 * An authorization request's parameters (RFC 6749 §4.1.1 with PKCE, RFC 7636, and RFC 8707's `resource`), checked in
 * the order the RFC asks: until the client and its redirect URI are known good, errors are shown on a page (never
 * redirected to an unchecked URI); after that, they go back to the editor as `error=` on the redirect.
 */
import type { OAuthClientRecord } from "../../../accounts/account-records.js";
import type { AccountRepository } from "../../../accounts/account-repository.js";
import { MCP_PATH } from "../service-origin.js";

export interface AuthorizationRequest {
  client: OAuthClientRecord;
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
  /** The parameters to carry through the sign-in form. */
  params: Record<string, string>;
}

export type CheckedRequest =
  | { ok: true; value: AuthorizationRequest }
  | { ok: false; page: string }
  | { ok: false; redirect: string };

const CARRIED = ["response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "scope", "resource"] as const;

/** Where the editor goes back to, with `params` added to the redirect URI's query. */
export function redirectTo(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

export function checkAuthorizationRequest(params: URLSearchParams, accounts: AccountRepository, origin: string): CheckedRequest {
  for (const name of CARRIED) if (params.getAll(name).length > 1) return { ok: false, page: `The parameter ${name} appears more than once.` };
  const clientId = params.get("client_id");
  const client = clientId ? accounts.oauthClient(clientId) : undefined;
  if (!client) return { ok: false, page: "The editor is not registered here (unknown client_id)." };
  const requested = params.get("redirect_uri");
  // One registered URI may be implied; several require the editor to say which.
  const redirectUri = requested ?? (client.redirectUris.length === 1 ? client.redirectUris[0]! : undefined);
  if (!redirectUri || !client.redirectUris.includes(redirectUri)) return { ok: false, page: "The redirect_uri is not one this editor registered." };

  const state = params.get("state") ?? undefined;
  const fail = (error: string, description: string): CheckedRequest => ({ ok: false, redirect: redirectTo(redirectUri, { error, error_description: description, state }) });
  if (params.get("response_type") !== "code") return fail("unsupported_response_type", "Only response_type=code is offered.");
  const challenge = params.get("code_challenge");
  if (!challenge || !/^[A-Za-z0-9_-]{43,128}$/.test(challenge)) return fail("invalid_request", "PKCE is required: code_challenge (S256).");
  if (params.get("code_challenge_method") !== "S256") return fail("invalid_request", "code_challenge_method must be S256.");
  const resource = params.get("resource");
  if (resource !== null && resource.replace(/\/$/, "") !== `${origin}${MCP_PATH}` && resource.replace(/\/$/, "") !== origin) {
    return fail("invalid_target", `This server issues tokens for ${origin}${MCP_PATH} only.`);
  }
  const carried: Record<string, string> = {};
  for (const name of CARRIED) {
    const value = params.get(name);
    if (value !== null) carried[name] = value;
  }
  carried.redirect_uri = redirectUri;
  carried.client_id = client.id;
  return { ok: true, value: { client, redirectUri, codeChallenge: challenge, state, params: carried } };
}
