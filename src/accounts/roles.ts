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
