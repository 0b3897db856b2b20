import { ok, withHeaders } from "../../http/responses.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import type { ApiRequest } from "../../http/types.js";
import { ServiceError } from "../../errors/catalogue.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import { CompleteResetBody, CreateMemberBody, UpdateMemberBody } from "../../accounts/account-schemas.js";
import type { Services } from "../core/services.js";
import { behindTls } from "../core/csrf.js";
import { presentMember, type MemberRecord } from "../../accounts/account-records.js";
import { digestSecret, newMemberId, newResetId, newResetSecret } from "../../accounts/secrets.js";

type Context = RouteContext<Services>;

/** How long a password reset link works. */
export const RESET_TTL_MS = 24 * 3_600_000;
/** Answers holding a secret shown once must not be kept by any cache. */
export const NO_STORE = { "cache-control": "no-store" } as const;

function memberOrNotFound(context: Context): MemberRecord {
  const member = context.services.accounts.repository.getMember(context.params.memberId!);
  if (!member) throw new ServiceError("NOT_FOUND", `No member ${context.params.memberId}.`);
  return member;
}

/** Where the dashboard's reset page is: the token rides in the fragment, so it never reaches a server log or a Referer. */
function resetLink(request: ApiRequest, publicOrigin: string | undefined, token: string): string | null {
  const origin = publicOrigin ?? (request.headers.host ? `${behindTls(request, undefined) ? "https" : "http"}://${request.headers.host}` : undefined);
  return origin === undefined ? null : `${origin}/dashboard/#/reset-password?token=${token}`;
}

/** Members (API.md §8): owners and the admin token manage them; every role reads the list. */
export const MEMBER_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/setup",
    {
      access: "public",
      bodyLimit: BODY_LIMITS.none,
      cors: false,
      // What a first-start screen needs to know, and nothing more: whether an owner exists yet.
      handle: (context) => ok({ hasOwner: context.services.accounts.repository.countOwners() > 0, adminTokenEnabled: context.services.accounts.credentials.adminTokenEnabled() }),
    },
  ],
  [
    "POST",
    "/admin/members",
    managementRoute("members", BODY_LIMITS.admin, async (context) => {
      const input = schemaBody(context.request, CreateMemberBody);
      const envelope = envelopeFor(context);
      const member: MemberRecord = {
        id: newMemberId(),
        email: input.email,
        name: input.name ?? input.email.slice(0, input.email.indexOf("@")),
        role: input.role,
        createdAt: envelope.at,
        lastSignInAt: null,
        password: await context.services.accounts.passwords.hash(input.password),
      };
      const created = await submitChange(context, "member.create", { member }, envelope);
      return ok({ member: presentMember(created.member) });
    }),
  ],
  ["GET", "/admin/members", managementRoute("read", BODY_LIMITS.none, (context) => ok({ members: context.services.accounts.repository.listMembers().map(presentMember) }))],
  ["GET", "/admin/members/:memberId", managementRoute("read", BODY_LIMITS.none, (context) => ok({ member: presentMember(memberOrNotFound(context)) }))],
  [
    "PATCH",
    "/admin/members/:memberId",
    managementRoute("members", BODY_LIMITS.admin, async (context) => {
      const input = schemaBody(context.request, UpdateMemberBody);
      const member = memberOrNotFound(context);
      const password = input.password === undefined ? undefined : await context.services.accounts.passwords.hash(input.password);
      const updated = await submitChange(context, "member.update", {
        memberId: member.id,
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.role !== undefined ? { role: input.role } : {}),
        ...(password !== undefined ? { password } : {}),
      });
      return ok({ member: presentMember(updated.member) });
    }),
  ],
  [
    "DELETE",
    "/admin/members/:memberId",
    managementRoute("members", BODY_LIMITS.none, async (context) => {
      const removed = await submitChange(context, "member.remove", { memberId: memberOrNotFound(context).id });
      return ok({ member: presentMember(removed.member) });
    }),
  ],
  [
    "POST",
    "/admin/members/:memberId/password-reset",
    managementRoute("members", BODY_LIMITS.none, async (context) => {
      const member = memberOrNotFound(context);
      const envelope = envelopeFor(context);
      const secret = newResetSecret();
      const reset = { id: newResetId(), memberId: member.id, createdAt: envelope.at, expiresAt: new Date(Date.parse(envelope.at) + RESET_TTL_MS).toISOString() };
      await submitChange(context, "password-reset.issue", { digest: digestSecret(secret), reset }, envelope);
      const link = resetLink(context.request, context.services.config.accounts.publicOrigin, secret);
      return withHeaders(ok({ reset: { memberId: member.id, token: secret, link, expiresAt: reset.expiresAt } }), NO_STORE);
    }),
  ],
  [
    "POST",
    "/admin/password-reset",
    {
      access: "public",
      bodyLimit: BODY_LIMITS.admin,
      cors: false,
      async handle(context) {
        const { accounts } = context.services;
        const input = schemaBody(context.request, CompleteResetBody);
        const digest = digestSecret(input.token);
        // Guessing reset tokens is throttled like guessing passwords: per address, and per token tried.
        const attempt = accounts.throttle.begin(context.request.remoteAddress(), `reset:${digest}`);
        const reset = accounts.repository.reset(digest);
        const member = reset && accounts.repository.getMember(reset.memberId);
        if (!reset || !member) throw new ServiceError("INVALID_CREDENTIALS", "The reset link is not valid or has expired.");
        const password = await accounts.passwords.hash(input.password);
        const envelope = envelopeFor(context, { kind: "member", id: member.id, email: member.email });
        const done = await submitChange(context, "password-reset.complete", { digest, password }, envelope);
        accounts.throttle.succeeded(attempt);
        return ok({ member: presentMember(done.member) });
      },
    },
  ],
];
