import { ServiceError } from "../errors/catalogue.js";
import type { ManagementPrincipal } from "./principal.js";

export const ROLES = ["owner", "editor", "viewer"] as const;
/** `owner`: everything; `editor`: everything but members and the admin token; `viewer`: reads only. */
export type Role = (typeof ROLES)[number];

/**
 * What a management route needs, declared once per route (`RouteSpec.permission`):
 * `read` every `GET` that shows configuration or tracked data (never a key or token in clear);
 * `write` changes to apps, environments, keys, features, rules and analytics settings;
 * `members` members, password resets, everyone's tokens and the admin token;
 * `self` the caller's own session and personal API tokens.
 */
export type Permission = "read" | "write" | "members" | "self";
export const PERMISSIONS: readonly Permission[] = ["read", "write", "members", "self"];

/** The one table of role × permission; `docs/SECURITY.md` prints it per route and a test holds the two together. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = Object.freeze({
  owner: new Set<Permission>(["read", "write", "members", "self"]),
  editor: new Set<Permission>(["read", "write", "self"]),
  viewer: new Set<Permission>(["read", "self"]),
});

const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/** Whether a request method changes nothing (no CSRF token needed, allowed to read-only tokens). */
export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method);
}

/**
 * Whether `principal` may use a route declaring `permission` with `method`. The admin token may do everything; a
 * member acts with their role; a token with its member's role, except that a read-only token changes nothing at
 * all (not even its own tokens: a read-only token minting a full one would be an escalation).
 */
export function permits(principal: ManagementPrincipal, permission: Permission, method: string): boolean {
  switch (principal.kind) {
    case "admin":
      return true;
    case "member":
      return ROLE_PERMISSIONS[principal.role].has(permission);
    case "token":
      if (principal.readOnly && !isSafeMethod(method)) return false;
      return ROLE_PERMISSIONS[principal.role].has(permission);
  }
}

/** Throws 403 `FORBIDDEN` unless `principal` may use a route declaring `permission`. */
export function authorize(principal: ManagementPrincipal, permission: Permission, method: string): void {
  if (permits(principal, permission, method)) return;
  const who = principal.kind === "token" && principal.readOnly ? "A read-only token" : `The ${principal.kind === "admin" ? "admin" : principal.role} role`;
  throw new ServiceError("FORBIDDEN", `${who} cannot do this.`);
}
