import type { Role } from "./roles.js";

/** The admin token: full access, for automation and for creating the first owner. */
export interface AdminPrincipal {
  kind: "admin";
}

/** A member signed in through a browser session (the `switchyard_session` cookie). */
export interface SessionPrincipal {
  kind: "member";
  memberId: string;
  email: string;
  role: Role;
  sessionId: string;
  /** The stored session's key (the SHA-256 digest of the cookie value), never the cookie value itself. */
  sessionDigest: string;
  /** What a state-changing request of this session must send as `x-csrf-token`. */
  csrfToken: string;
}

/** A personal API token (`Authorization: Bearer sya_…`), acting for its member. */
export interface TokenPrincipal {
  kind: "token";
  tokenId: string;
  memberId: string;
  email: string;
  /** The role the token acts with: its member's, or `viewer` for a read-only token. */
  role: Role;
  /** The member's own role. */
  memberRole: Role;
  readOnly: boolean;
}

/** Who is calling a management route. */
export type ManagementPrincipal = AdminPrincipal | SessionPrincipal | TokenPrincipal;

/** Who made a change, as the audit log records it (API.md §8). `anonymous`: a failed sign-in or a password reset link. */
export type Actor =
  | { kind: "admin"; id: "admin" }
  | { kind: "member"; id: string; email: string }
  | { kind: "token"; id: string; memberId: string; email: string }
  | { kind: "anonymous"; id: "anonymous" };

export const ADMIN_ACTOR: Actor = Object.freeze({ kind: "admin", id: "admin" });
export const ANONYMOUS_ACTOR: Actor = Object.freeze({ kind: "anonymous", id: "anonymous" });

export function actorOf(principal: ManagementPrincipal): Actor {
  switch (principal.kind) {
    case "admin":
      return ADMIN_ACTOR;
    case "member":
      return { kind: "member", id: principal.memberId, email: principal.email };
    case "token":
      return { kind: "token", id: principal.tokenId, memberId: principal.memberId, email: principal.email };
  }
}

/** The member a principal acts for; undefined for the admin token. */
export function memberIdOf(principal: ManagementPrincipal): string | undefined {
  return principal.kind === "admin" ? undefined : principal.memberId;
}
