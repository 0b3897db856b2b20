/** Appliers for members, password resets, API tokens, sessions, sign-in failures and the admin token. */
import type { MemberRecord } from "../accounts/account-records.js";
import type { Appliers } from "./apply-context.js";
import { refused } from "./outcome.js";

type AccountAppliers = Pick<
  Appliers,
  | "member.create"
  | "member.update"
  | "member.remove"
  | "password-reset.issue"
  | "password-reset.complete"
  | "token.create"
  | "token.revoke"
  | "session.create"
  | "session.revoke"
  | "sign-in.fail"
  | "credential.touch"
  | "admin-token.rotate"
  | "admin-token.disable"
>;

const memberEntity = (member: MemberRecord) => ({ kind: "member", id: member.id, memberId: member.id });
const NO_OWNER_LEFT = "The last owner cannot be removed or demoted; make another member owner first.";

export const ACCOUNT_APPLIERS: AccountAppliers = {
  "member.create"({ accounts }, change) {
    const { member } = change;
    if (accounts.getMember(member.id) || accounts.memberByEmail(member.email)) return refused("CONFLICT", `A member with email ${member.email} exists.`);
    accounts.putMember(member);
    return {
      ok: true,
      value: { member },
      audit: { action: "member.create", entity: memberEntity(member), details: { email: member.email, name: member.name, role: member.role } },
    };
  },

  "member.update"({ accounts }, change) {
    const before = accounts.getMember(change.memberId);
    if (!before) return refused("NOT_FOUND", `No member ${change.memberId}.`);
    if (before.role === "owner" && change.role !== undefined && change.role !== "owner" && accounts.countOwners() === 1) return refused("CONFLICT", NO_OWNER_LEFT);
    const member: MemberRecord = {
      ...before,
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(change.role !== undefined ? { role: change.role } : {}),
      ...(change.password !== undefined ? { password: change.password } : {}),
    };
    accounts.putMember(member);
    const details: Record<string, unknown> = {};
    if (member.name !== before.name) details.name = { from: before.name, to: member.name };
    if (member.role !== before.role) details.role = { from: before.role, to: member.role };
    if (change.password !== undefined) {
      // A new password ends every session and outstanding reset link of the member.
      details.password = "changed";
      details.sessionsEnded = accounts.revokeAll(member.id, "session");
      accounts.revokeAll(member.id, "reset");
    }
    return { ok: true, value: { member }, audit: { action: "member.update", entity: memberEntity(member), details } };
  },

  "member.remove"({ accounts }, change) {
    const member = accounts.getMember(change.memberId);
    if (!member) return refused("NOT_FOUND", `No member ${change.memberId}.`);
    if (member.role === "owner" && accounts.countOwners() === 1) return refused("CONFLICT", NO_OWNER_LEFT);
    const tokens = accounts.credentialDigests(member.id, "token").length;
    const sessions = accounts.credentialDigests(member.id, "session").length;
    accounts.removeMember(member);
    return {
      ok: true,
      value: { member },
      audit: { action: "member.remove", entity: memberEntity(member), details: { email: member.email, role: member.role, tokensRevoked: tokens, sessionsEnded: sessions } },
    };
  },

  "password-reset.issue"({ accounts }, change) {
    const member = accounts.getMember(change.reset.memberId);
    if (!member) return refused("NOT_FOUND", `No member ${change.reset.memberId}.`);
    // One link at a time: a new one replaces any earlier.
    accounts.revokeAll(member.id, "reset");
    accounts.putReset(change.digest, change.reset);
    return {
      ok: true,
      value: { reset: change.reset },
      audit: { action: "member.password-reset-issue", entity: memberEntity(member), details: { resetId: change.reset.id, expiresAt: change.reset.expiresAt } },
    };
  },

  "password-reset.complete"({ accounts }, change) {
    const reset = accounts.reset(change.digest);
    const member = reset && accounts.getMember(reset.memberId);
    if (!reset || !member || reset.expiresAt <= change.at) return refused("INVALID_CREDENTIALS", "The reset link is not valid or has expired.");
    const updated: MemberRecord = { ...member, password: change.password };
    accounts.putMember(updated);
    accounts.revokeAll(member.id, "reset");
    const sessionsEnded = accounts.revokeAll(member.id, "session");
    return {
      ok: true,
      value: { member: updated },
      audit: { action: "member.password-reset", entity: memberEntity(member), details: { resetId: reset.id, sessionsEnded } },
    };
  },

  "token.create"({ accounts }, change) {
    const { token } = change;
    const member = accounts.getMember(token.memberId);
    if (!member) return refused("NOT_FOUND", `No member ${token.memberId}.`);
    accounts.putToken(change.digest, token);
    return {
      ok: true,
      value: { token },
      audit: { action: "token.create", entity: { kind: "token", id: token.id, memberId: token.memberId }, details: { name: token.name, readOnly: token.readOnly } },
    };
  },

  "token.revoke"({ accounts }, change) {
    const found = accounts.tokenById(change.tokenId);
    if (!found) return refused("NOT_FOUND", `No token ${change.tokenId}.`);
    accounts.revoke("token", found.digest);
    const { token } = found;
    return {
      ok: true,
      value: { token },
      audit: { action: "token.revoke", entity: { kind: "token", id: token.id, memberId: token.memberId }, details: { name: token.name, readOnly: token.readOnly } },
    };
  },

  "session.create"({ accounts }, change) {
    const member = accounts.getMember(change.session.memberId);
    if (!member) return refused("INVALID_CREDENTIALS");
    // A new id at every sign-in: the session the browser came with (if any) ends here.
    if (change.replaces !== null) accounts.revoke("session", change.replaces);
    for (const digest of change.prune) accounts.revoke("session", digest);
    accounts.putSession(change.digest, change.session);
    const signedIn: MemberRecord = { ...member, lastSignInAt: change.at };
    accounts.putMember(signedIn);
    return {
      ok: true,
      value: { session: change.session, member: signedIn },
      audit: { action: "session.sign-in", entity: { kind: "session", id: change.session.id, memberId: member.id }, details: { email: member.email } },
    };
  },

  "session.revoke"({ accounts }, change) {
    const session = accounts.session(change.digest);
    const revoked = accounts.revoke("session", change.digest);
    return {
      ok: true,
      value: { revoked },
      audit: { action: "session.sign-out", entity: { kind: "session", id: session?.id ?? "unknown", ...(session ? { memberId: session.memberId } : {}) }, details: {} },
    };
  },

  "sign-in.fail"(_context, change) {
    return {
      ok: true,
      value: {},
      audit: {
        action: "session.sign-in-failed",
        entity: { kind: "session", id: "none", ...(change.memberId ? { memberId: change.memberId } : {}) },
        details: { email: change.email, ...(change.memberId ? { memberId: change.memberId } : {}) },
      },
    };
  },

  "credential.touch"({ accounts }, change) {
    if (change.credential === "session") {
      const session = accounts.session(change.digest);
      if (!session || session.lastSeenAt >= change.at) return { ok: true, value: { touched: false }, audit: null };
      accounts.putSession(change.digest, { ...session, lastSeenAt: change.at });
    } else {
      const token = accounts.token(change.digest);
      if (!token || (token.lastUsedAt !== null && token.lastUsedAt >= change.at)) return { ok: true, value: { touched: false }, audit: null };
      accounts.putToken(change.digest, { ...token, lastUsedAt: change.at });
    }
    return { ok: true, value: { touched: true }, audit: null };
  },

  "admin-token.rotate"({ accounts }, change) {
    const adminToken = { digest: change.digest, hint: change.hint, changedAt: change.at };
    accounts.putAdminToken(adminToken);
    return { ok: true, value: { adminToken }, audit: { action: "admin-token.rotate", entity: { kind: "admin-token", id: "admin" }, details: { token: change.hint } } };
  },

  "admin-token.disable"({ accounts }, change) {
    // Someone must still be able to manage members: an owner who can sign in.
    if (accounts.countOwners() === 0) return refused("CONFLICT", "Create an owner before turning the admin token off.");
    const adminToken = { digest: null, hint: null, changedAt: change.at };
    accounts.putAdminToken(adminToken);
    return { ok: true, value: { adminToken }, audit: { action: "admin-token.disable", entity: { kind: "admin-token", id: "admin" }, details: {} } };
  },
};
