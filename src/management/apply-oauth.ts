/** Appliers for the MCP OAuth flow: client registration, a member's approval (a code), its redemption (a token). */
import type { Appliers } from "./apply-context.js";
import { refused } from "./outcome.js";

type OAuthAppliers = Pick<Appliers, "oauth-client.register" | "oauth-code.issue" | "oauth-code.redeem">;

export const OAUTH_APPLIERS: OAuthAppliers = {
  "oauth-client.register"({ accounts }, change) {
    if (accounts.oauthClient(change.client.id)) return refused("CONFLICT", `Client ${change.client.id} exists.`);
    accounts.putOAuthClient(change.client);
    return { ok: true, value: { client: change.client }, audit: null };
  },

  "oauth-code.issue"({ accounts }, change) {
    const { code } = change;
    const member = accounts.getMember(code.memberId);
    const client = accounts.oauthClient(code.clientId);
    if (!member) return refused("INVALID_CREDENTIALS");
    if (!client) return refused("NOT_FOUND", `No OAuth client ${code.clientId}.`);
    accounts.putOAuthCode(change.digest, code);
    return {
      ok: true,
      value: { code },
      audit: {
        action: "oauth.approve",
        entity: { kind: "oauth-client", id: client.id, memberId: member.id },
        details: { clientName: client.name, redirectUri: code.redirectUri },
      },
    };
  },

  "oauth-code.redeem"({ accounts }, change) {
    const code = accounts.oauthCode(change.codeDigest);
    // Checked against the change's time, not a clock: every node decides the same.
    if (!code || change.at >= code.expiresAt) return refused("INVALID_CREDENTIALS", "The authorization code is not valid.");
    const { token } = change;
    // Refusals come before the first write: a refused change must leave the store as it was.
    if (!accounts.getMember(token.memberId)) return refused("INVALID_CREDENTIALS", "The authorization code is not valid.");
    accounts.removeOAuthCode(change.codeDigest);
    accounts.putToken(change.tokenDigest, token);
    return {
      ok: true,
      value: { token },
      audit: {
        action: "token.create",
        entity: { kind: "token", id: token.id, memberId: token.memberId },
        details: { name: token.name, readOnly: token.readOnly, expiresAt: token.expiresAt, oauthClient: token.oauthClient },
      },
    };
  },
};
