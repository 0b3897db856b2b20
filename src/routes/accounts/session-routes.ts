import { ok, withHeaders } from "../../http/responses.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import type { ApiResponse } from "../../http/types.js";
import { ServiceError } from "../../errors/catalogue.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import { SignInBody } from "../../accounts/account-schemas.js";
import type { Services } from "../core/services.js";
import { normaliseEmail } from "../../accounts/account-repository.js";
import { clearedSessionCookie, readCookie, SESSION_COOKIE, sessionCookie } from "../core/cookies.js";
import { behindTls, checkOrigin } from "../core/csrf.js";
import { NO_STORE } from "./member-routes.js";
import { actorOf, ANONYMOUS_ACTOR } from "../../accounts/principal.js";
import { presentMember } from "../../accounts/account-records.js";
import { csrfTokenFor, digestSecret, newSessionId, newSessionSecret } from "../../accounts/secrets.js";

type Context = RouteContext<Services>;

/** Email + password → a new session. Every failure looks the same; failures are throttled and audited. */
async function signIn(context: Context): Promise<ApiResponse> {
  const { request, services } = context;
  const { accounts, config } = services;
  // A foreign page must not sign a browser into the page's own account either (login CSRF).
  checkOrigin(request, config.accounts.publicOrigin);
  const input = schemaBody(request, SignInBody);
  const email = normaliseEmail(input.email);
  const attempt = accounts.throttle.begin(request.remoteAddress(), email);
  const member = accounts.repository.memberByEmail(email);
  // The hash is checked whether or not the account exists, so timing does not tell which part was wrong either.
  const valid = await accounts.passwords.verify(input.password, member?.password);
  if (!valid || !member) {
    await submitChange(context, "sign-in.fail", { email: email.slice(0, 254), memberId: member?.id ?? null }, envelopeFor(context, ANONYMOUS_ACTOR));
    throw new ServiceError("INVALID_CREDENTIALS");
  }
  accounts.throttle.succeeded(attempt);

  const secret = newSessionSecret();
  const envelope = envelopeFor(context, { kind: "member", id: member.id, email: member.email });
  // No fixation: the id is always new, and the session the browser came with ends.
  const presented = readCookie(request.headers.cookie, SESSION_COOKIE);
  const presentedDigest = presented === undefined ? undefined : digestSecret(presented);
  const replaces = presentedDigest !== undefined && accounts.repository.session(presentedDigest) ? presentedDigest : null;
  const prune = accounts.repository.credentialDigests(member.id, "session").filter((digest) => {
    const session = accounts.repository.session(digest);
    return !session || accounts.credentials.expired(session);
  });
  const session = { id: newSessionId(), memberId: member.id, createdAt: envelope.at, lastSeenAt: envelope.at };
  const created = await submitChange(context, "session.create", { digest: digestSecret(secret), session, prune, replaces }, envelope);
  const maxAgeSeconds = Math.ceil(config.accounts.sessionAbsoluteMs / 1000);
  return withHeaders(ok({ member: presentMember(created.member), csrfToken: csrfTokenFor(secret) }), {
    "set-cookie": sessionCookie(secret, maxAgeSeconds, behindTls(request, config.accounts.publicOrigin)),
    ...NO_STORE,
  });
}

/** Browser sessions (API.md §8). */
export const SESSION_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["POST", "/admin/session", { access: "public", bodyLimit: BODY_LIMITS.admin, cors: false, handle: signIn }],
  [
    "GET",
    "/admin/session",
    managementRoute("self", BODY_LIMITS.none, (context) => {
      const principal = context.principal;
      if (principal.kind === "admin") return ok({ member: null, role: "owner", actor: actorOf(principal) });
      if (principal.kind !== "member" && principal.kind !== "token") throw new Error("route misconfigured: not a management principal");
      const member = context.services.accounts.repository.getMember(principal.memberId);
      if (!member) throw new ServiceError("UNAUTHORIZED");
      const fields: Record<string, unknown> = { member: presentMember(member), role: principal.role, actor: actorOf(principal) };
      // A page that reloads finds its CSRF token here; other origins cannot read this answer (no CORS on /admin).
      if (principal.kind === "member") fields.csrfToken = principal.csrfToken;
      return withHeaders(ok(fields), NO_STORE);
    }),
  ],
  [
    "DELETE",
    "/admin/session",
    managementRoute("self", BODY_LIMITS.none, async (context) => {
      const principal = context.principal;
      if (principal.kind !== "member") throw new ServiceError("FORBIDDEN", "Only a browser session signs out; revoke an API token with DELETE /admin/tokens/:id.");
      await submitChange(context, "session.revoke", { digest: principal.sessionDigest });
      return withHeaders(ok(), { "set-cookie": clearedSessionCookie(behindTls(context.request, context.services.config.accounts.publicOrigin)) });
    }),
  ],
];
