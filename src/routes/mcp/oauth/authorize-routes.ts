/**
 * The authorization endpoint: GET shows the sign-in-and-approve page; its form POSTs back here with the member's
 * email and password. A good sign-in with "approve" issues a one-time code (an audited `oauth.approve` by the member)
 * and sends the browser back to the editor; "deny" sends it back with `error=access_denied`. Sign-in failures are
 * throttled and audited exactly like `POST /admin/session`.
 */
import { normaliseEmail } from "../../../accounts/account-repository.js";
import { checkOrigin } from "../../core/csrf.js";
import { ANONYMOUS_ACTOR } from "../../../accounts/principal.js";
import { readCookie, SESSION_COOKIE } from "../../core/cookies.js";
import type { MemberRecord } from "../../../accounts/account-records.js";
import { csrfTokenFor, digestSecret } from "../../../accounts/secrets.js";
import { timingSafeEqual } from "node:crypto";
import { BODY_LIMITS, type RouteContext, type RouteSpec } from "../../core/route.js";
import type { HttpMethod } from "../../core/router.js";
import type { ApiResponse } from "../../../http/types.js";
import { ServiceError } from "../../../errors/catalogue.js";
import { envelopeFor, submitChange } from "../../core/submit.js";
import type { Services } from "../../core/services.js";
import { randomBase62 } from "../../../tenancy/identifiers.js";
import { serviceOrigin } from "../service-origin.js";
import { approvalPage, errorPage, PAGE_HEADERS } from "./authorize-page.js";
import { checkAuthorizationRequest, redirectTo, type AuthorizationRequest } from "./authorize-request.js";
import { CODE_LIFETIME_MS, OAUTH_PATHS } from "./endpoints.js";
import { formParams } from "./oauth-responses.js";

type Context = RouteContext<Services>;

/** Constant-time comparison of two secrets of any length. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const DAY_MS = 86_400_000;

function html(status: number, body: string): ApiResponse {
  return { status, headers: { ...PAGE_HEADERS }, body };
}

function redirect(location: string): ApiResponse {
  return { status: 302, headers: { location, "cache-control": "no-store", "referrer-policy": "no-referrer" }, body: "" };
}

/** The member signed in to the dashboard in this browser (a live session cookie), with that session's CSRF token. */
function signedInMember(context: Context): { member: MemberRecord; csrfToken: string } | undefined {
  const secret = readCookie(context.request.headers.cookie, SESSION_COOKIE);
  if (secret === undefined) return undefined;
  const live = context.services.accounts.credentials.liveSession(secret);
  const member = live && context.services.accounts.repository.getMember(live.session.memberId);
  return member ? { member, csrfToken: csrfTokenFor(secret) } : undefined;
}

function pageFor(context: Context, request: AuthorizationRequest, status: number, extra: { email?: string; error?: string } = {}): ApiResponse {
  const session = signedInMember(context);
  return html(
    status,
    approvalPage({
      clientName: request.client.name,
      redirectHost: new URL(request.redirectUri).host || request.redirectUri.split(":")[0]!,
      tokenDays: Math.max(1, Math.round(context.services.config.accounts.oauthTokenTtlMs / DAY_MS)),
      params: request.params,
      ...(session ? { signedIn: { email: session.member.email, csrfToken: session.csrfToken } } : {}),
      ...extra,
    }),
  );
}

function checked(context: Context, params: URLSearchParams): { value: AuthorizationRequest } | { response: ApiResponse } {
  const origin = serviceOrigin(context.request, context.services.config.accounts.publicOrigin);
  const result = checkAuthorizationRequest(params, context.services.accounts.repository, origin);
  if (result.ok) return { value: result.value };
  return { response: "page" in result ? html(400, errorPage(result.page)) : redirect(result.redirect) };
}

function showPage(context: Context): ApiResponse {
  const request = checked(context, new URLSearchParams(context.request.query));
  return "response" in request ? request.response : pageFor(context, request.value, 200);
}

async function decide(context: Context): Promise<ApiResponse> {
  const { services } = context;
  const form = formParams(context.request.body, context.request.headers["content-type"]);
  if (!form) return html(400, errorPage("The form was not sent as a form."));
  // A foreign page must not submit this form (login CSRF); browsers send Origin on form posts.
  try {
    checkOrigin(context.request, services.config.accounts.publicOrigin);
  } catch {
    return html(403, errorPage("The form was sent from another site."));
  }
  const request = checked(context, form);
  if ("response" in request) return request.response;
  const { value } = request;
  if (form.get("decision") !== "approve") return redirect(redirectTo(value.redirectUri, { error: "access_denied", error_description: "The member denied access.", state: value.state }));

  // One click for a member signed in here: the session's CSRF token in the form proves the page was this service's.
  const csrf = form.get("csrf");
  if (csrf !== null) {
    const session = signedInMember(context);
    if (!session || !sameSecret(csrf, session.csrfToken)) return pageFor(context, value, 403, { error: "Your session ended or the page is stale: approve again." });
    return issueCode(context, value, session.member);
  }

  const email = normaliseEmail(form.get("email") ?? "").slice(0, 254);
  const password = form.get("password") ?? "";
  const { accounts } = services;
  let attempt;
  try {
    attempt = accounts.throttle.begin(context.request.remoteAddress(), email);
  } catch (error) {
    if (error instanceof ServiceError && error.code === "RATE_LIMITED") return pageFor(context, value, 429, { email, error: "Too many failed sign-ins; wait a few minutes and try again." });
    throw error;
  }
  const member = accounts.repository.memberByEmail(email);
  // The hash is checked whether or not the account exists, so timing does not tell which part was wrong.
  const valid = password.length > 0 && password.length <= 1024 && (await accounts.passwords.verify(password, member?.password));
  if (!valid || !member) {
    await submitChange(context, "sign-in.fail", { email, memberId: member?.id ?? null }, envelopeFor(context, ANONYMOUS_ACTOR));
    return pageFor(context, value, 401, { email, error: "The email or password is not valid." });
  }
  accounts.throttle.succeeded(attempt);
  return issueCode(context, value, member);
}

/** A one-time code for the approving member (an audited `oauth-code.issue`), and the browser back to the editor. */
async function issueCode(context: Context, value: AuthorizationRequest, member: MemberRecord): Promise<ApiResponse> {
  const code = randomBase62(43);
  const envelope = envelopeFor(context, { kind: "member", id: member.id, email: member.email });
  const record = {
    id: `oac_${randomBase62(12)}`,
    clientId: value.client.id,
    memberId: member.id,
    redirectUri: value.redirectUri,
    codeChallenge: value.codeChallenge,
    createdAt: envelope.at,
    expiresAt: new Date(Date.parse(envelope.at) + CODE_LIFETIME_MS).toISOString(),
  };
  await submitChange(context, "oauth-code.issue", { digest: digestSecret(code), code: record }, envelope);
  return redirect(redirectTo(value.redirectUri, { code, state: value.state }));
}

export const AUTHORIZE_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["GET", OAUTH_PATHS.authorize, { access: "public", bodyLimit: BODY_LIMITS.none, cors: false, handle: showPage }],
  ["POST", OAUTH_PATHS.authorize, { access: "public", bodyLimit: BODY_LIMITS.single, cors: false, handle: decide }],
];
