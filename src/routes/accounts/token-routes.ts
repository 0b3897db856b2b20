import { ok, withHeaders } from "../../http/responses.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import { ServiceError } from "../../errors/catalogue.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import { CreateTokenBody } from "../../accounts/account-schemas.js";
import type { Services } from "../core/services.js";
import { NO_STORE } from "./member-routes.js";
import { memberIdOf, type ManagementPrincipal } from "../../accounts/principal.js";
import { presentToken } from "../../accounts/account-records.js";
import { permits } from "../../accounts/permissions.js";
import { digestSecret, newApiTokenSecret, newTokenId } from "../../accounts/secrets.js";

type Context = RouteContext<Services>;

function principalOf(context: Context): ManagementPrincipal {
  const principal = context.principal;
  if (principal.kind === "admin" || principal.kind === "member" || principal.kind === "token") return principal;
  throw new Error("route misconfigured: not a management principal");
}

/** Owners (and the admin token) see and revoke everyone's tokens; everyone else only their own. */
function seesAllTokens(principal: ManagementPrincipal, method: string): boolean {
  return permits(principal, "members", method);
}

/** Personal API tokens (API.md §8): created and revoked by their member; the secret is shown once. */
export const TOKEN_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "POST",
    "/admin/tokens",
    managementRoute("self", BODY_LIMITS.admin, async (context) => {
      const principal = principalOf(context);
      const memberId = memberIdOf(principal);
      if (memberId === undefined) throw new ServiceError("FORBIDDEN", "The admin token belongs to no member: sign in, or use a member's API token, to create one.");
      const input = schemaBody(context.request, CreateTokenBody);
      const envelope = envelopeFor(context);
      const secret = newApiTokenSecret();
      const token = { id: newTokenId(), memberId, name: input.name, readOnly: input.readOnly, createdAt: envelope.at, lastUsedAt: null };
      const created = await submitChange(context, "token.create", { digest: digestSecret(secret), token }, envelope);
      return withHeaders(ok({ token: presentToken(created.token), secret }), NO_STORE);
    }),
  ],
  [
    "GET",
    "/admin/tokens",
    managementRoute("self", BODY_LIMITS.none, (context) => {
      const principal = principalOf(context);
      const { repository } = context.services.accounts;
      const tokens = seesAllTokens(principal, "GET") ? repository.listTokens() : repository.listTokens(memberIdOf(principal));
      return ok({ tokens: tokens.map(presentToken) });
    }),
  ],
  [
    "DELETE",
    "/admin/tokens/:tokenId",
    managementRoute("self", BODY_LIMITS.none, async (context) => {
      const principal = principalOf(context);
      const found = context.services.accounts.repository.tokenById(context.params.tokenId!);
      // Someone else's token is as unknown as a missing one: its existence is not for this caller to learn.
      if (!found || (found.token.memberId !== memberIdOf(principal) && !seesAllTokens(principal, "DELETE"))) {
        throw new ServiceError("NOT_FOUND", `No token ${context.params.tokenId}.`);
      }
      const revoked = await submitChange(context, "token.revoke", { tokenId: found.token.id });
      return ok({ token: presentToken(revoked.token) });
    }),
  ],
];
