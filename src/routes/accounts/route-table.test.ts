import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MANAGEMENT_ROUTES } from "../registry.js";
import { TOOLS } from "../mcp/tools.js";
import type { ManagementPrincipal } from "../../accounts/principal.js";
import { permits } from "../../accounts/permissions.js";
import { ROLES } from "../../accounts/roles.js";

const SECURITY = readFileSync(new URL("../../../docs/SECURITY.md", import.meta.url), "utf8");

const principals: [string, ManagementPrincipal][] = [
  ["admin token", { kind: "admin" }],
  ...ROLES.map((role): [string, ManagementPrincipal] => [role, { kind: "member", memberId: "m", email: "e", role, sessionId: "s", sessionDigest: "d", csrfToken: "c" }]),
  ["read-only token", { kind: "token", tokenId: "t", memberId: "m", email: "e", role: "viewer", memberRole: "owner", readOnly: true }],
];

/** One row per management route, from the routes themselves: what docs/SECURITY.md must print. */
function rows(): string[] {
  return MANAGEMENT_ROUTES.map(([method, path, spec]) => {
    const cells =
      spec.access === "public"
        ? principals.map(() => "anyone")
        : principals.map(([, principal]) => (permits(principal, spec.permission!, method) ? "yes" : "—"));
    return `| \`${method} ${path}\` | ${spec.access === "public" ? "none" : spec.permission} | ${cells.join(" | ")} |`;
  });
}

/** One row per MCP tool: a read tool counts as a GET, a write tool as a state-changing request (src/routes/mcp/mcp-server.ts). */
function toolRows(): string[] {
  return TOOLS.map((tool) => {
    const cells = principals.map(([, principal]) => (permits(principal, tool.permission, tool.permission === "read" ? "GET" : "POST") ? "yes" : "—"));
    return `| \`${tool.name}\` (MCP tool) | ${tool.permission} | ${cells.join(" | ")} |`;
  });
}

describe("route × role table", () => {
  it("gives every management route a permission, or makes it public on purpose", () => {
    for (const [method, path, spec] of MANAGEMENT_ROUTES) {
      expect(path.startsWith("/admin/") || path.startsWith("/api/"), path).toBe(true);
      if (spec.access === "public") expect(["/admin/setup", "/admin/session", "/admin/password-reset"], `${method} ${path}`).toContain(path);
      else expect(spec.permission, `${method} ${path}`).toBeDefined();
    }
  });

  it("is printed in docs/SECURITY.md exactly as the code decides it, route by route", () => {
    const documented = SECURITY.split("\n").filter((line) => line.startsWith("| `"));
    expect(documented).toEqual([...rows(), ...toolRows()]);
  });
});
