import { ServiceError } from "../errors/catalogue.js";
import type { ManagementPrincipal } from "./principal.js";
import { isSafeMethod, ROLE_PERMISSIONS, type Permission } from "./roles.js";

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
