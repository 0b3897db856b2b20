import { describe, expect, it } from "vitest";
import { ServiceError } from "../errors/catalogue.js";
import type { ManagementPrincipal } from "./principal.js";
import { authorize, permits } from "./permissions.js";
import { PERMISSIONS, ROLE_PERMISSIONS, ROLES, type Permission, type Role } from "./roles.js";

const member = (role: Role): ManagementPrincipal => ({ kind: "member", memberId: "m", email: "m@x.test", role, sessionId: "s", sessionDigest: "d", csrfToken: "c" });
const token = (memberRole: Role, readOnly: boolean): ManagementPrincipal => ({
  kind: "token",
  tokenId: "t",
  memberId: "m",
  email: "m@x.test",
  role: readOnly ? "viewer" : memberRole,
  memberRole,
  readOnly,
});

/** The table as the contract states it (API.md §8), written out in full rather than derived. */
const EXPECTED: Record<Role, Record<Permission, boolean>> = {
  owner: { read: true, write: true, members: true, self: true },
  editor: { read: true, write: true, members: false, self: true },
  viewer: { read: true, write: false, members: false, self: true },
};

describe("role table", () => {
  it("gives each role exactly the permissions the contract lists", () => {
    for (const role of ROLES) for (const permission of PERMISSIONS) expect(ROLE_PERMISSIONS[role].has(permission), `${role} ${permission}`).toBe(EXPECTED[role][permission]);
  });

  it("lets the admin token do everything", () => {
    for (const permission of PERMISSIONS) for (const method of ["GET", "POST", "DELETE"]) expect(permits({ kind: "admin" }, permission, method)).toBe(true);
  });

  it("lets a session act with its member's role, whatever the method", () => {
    for (const role of ROLES) for (const permission of PERMISSIONS) for (const method of ["GET", "PUT"]) expect(permits(member(role), permission, method)).toBe(EXPECTED[role][permission]);
  });

  it("lets a token act with its member's role, and a read-only one read and nothing else", () => {
    for (const role of ROLES) {
      for (const permission of PERMISSIONS) {
        expect(permits(token(role, false), permission, "POST")).toBe(EXPECTED[role][permission]);
        expect(permits(token(role, true), permission, "GET")).toBe(EXPECTED.viewer[permission]);
        // Not even its own tokens: a read-only token minting a full one would be an escalation.
        expect(permits(token(role, true), permission, "POST")).toBe(false);
        expect(permits(token(role, true), permission, "DELETE")).toBe(false);
      }
    }
  });

  it("refuses with 403 FORBIDDEN", () => {
    let caught: unknown;
    try {
      authorize(member("viewer"), "write", "PUT");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ServiceError);
    expect((caught as ServiceError).code).toBe("FORBIDDEN");
    expect(() => authorize(member("editor"), "write", "PUT")).not.toThrow();
  });
});
