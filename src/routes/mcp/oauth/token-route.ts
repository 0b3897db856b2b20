/**
 * The token endpoint (RFC 6749 §4.1.3 with PKCE): an editor trades the one-time code and its PKCE verifier for an
 * access token. The token is a personal API token of the approving member (`sya_…`, acting with the member's role),
 * with an expiry and the editor's name, so it appears in the member's token list and is revoked there like any other.
 * No refresh tokens: when it expires the editor runs the sign-in again.
 */
import { createHash } from "node:crypto";
import { digestSecret, newApiTokenSecret, newTokenId } from "../../../accounts/secrets.js";
import { BODY_LIMITS, type RouteContext, type RouteSpec } from "../../core/route.js";
import type { HttpMethod } from "../../core/router.js";
import type { ApiResponse } from "../../../http/types.js";
import { ServiceError } from "../../../errors/catalogue.js";
import { envelopeFor, submitChange } from "../../core/submit.js";
import type { Services } from "../../core/services.js";
import { sameSecret } from "../../../accounts/secrets.js";
import { OAUTH_PATHS } from "./endpoints.js";
import { formParams, oauthError, oauthJson } from "./oauth-responses.js";

const invalidGrant = (description: string) => oauthError(400, "invalid_grant", description);

async function token(context: RouteContext<Services>): Promise<ApiResponse> {
  const form = formParams(context.request.body, context.request.headers["content-type"]);
  if (!form) return oauthError(400, "invalid_request", "Send the parameters as application/x-www-form-urlencoded.");
  if (form.get("grant_type") !== "authorization_code") return oauthError(400, "unsupported_grant_type", "Only grant_type=authorization_code is offered.");
  const code = form.get("code");
  const verifier = form.get("code_verifier");
  const clientId = form.get("client_id");
  if (!code || !verifier || !clientId) return oauthError(400, "invalid_request", "code, code_verifier and client_id are required.");
  const { repository } = context.services.accounts;
  const client = repository.oauthClient(clientId);
  if (!client) return oauthError(401, "invalid_client", "Unknown client_id.");
  const codeDigest = digestSecret(code);
  const record = repository.oauthCode(codeDigest);
  if (!record || record.clientId !== client.id || Date.now() >= Date.parse(record.expiresAt)) return invalidGrant("The code is unknown, used, expired or not this client's.");
  const redirectUri = form.get("redirect_uri");
  if (redirectUri !== null && redirectUri !== record.redirectUri) return invalidGrant("redirect_uri differs from the authorization request's.");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  if (!sameSecret(challenge, record.codeChallenge)) return invalidGrant("The code_verifier does not match the code_challenge.");

  const member = repository.getMember(record.memberId);
  if (!member) return invalidGrant("The approving member no longer exists.");
  const envelope = envelopeFor(context, { kind: "member", id: member.id, email: member.email });
  const ttlMs = context.services.config.accounts.oauthTokenTtlMs;
  const secret = newApiTokenSecret();
  const issued = {
    id: newTokenId(),
    memberId: member.id,
    name: `${client.name} (MCP)`.slice(0, 128),
    readOnly: false,
    createdAt: envelope.at,
    lastUsedAt: null,
    expiresAt: new Date(Date.parse(envelope.at) + ttlMs).toISOString(),
    oauthClient: { id: client.id, name: client.name },
  };
  try {
    await submitChange(context, "oauth-code.redeem", { codeDigest, tokenDigest: digestSecret(secret), token: issued }, envelope);
  } catch (error) {
    // Redeemed by a concurrent request meanwhile: a code works once.
    if (error instanceof ServiceError && error.code === "INVALID_CREDENTIALS") return invalidGrant("The code is unknown, used, expired or not this client's.");
    throw error;
  }
  return oauthJson(200, { access_token: secret, token_type: "Bearer", expires_in: Math.floor(ttlMs / 1000) });
}

export const TOKEN_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["POST", OAUTH_PATHS.token, { access: "public", bodyLimit: BODY_LIMITS.single, cors: true, handle: token }],
];
