import { ok, withHeaders } from "../../http/responses.js";
import { BODY_LIMITS, managementRoute, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { ServiceError } from "../../errors/catalogue.js";
import { submitChange } from "../core/submit.js";
import type { Services } from "../core/services.js";
import { newAdminToken } from "../../accounts/admin-token.js";
import { digestKey, maskKey } from "../../tenancy/identifiers.js";
import { parseListQuery } from "../../storage/cursor.js";
import { NO_STORE } from "../accounts/member-routes.js";

/** A filter value: bounded printable text. */
function filterValue(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  if (value === null || value === "") return undefined;
  if (value.length > 256 || /[\u0000-\u001f]/.test(value)) {
    throw new ServiceError("INVALID_QUERY", undefined, [{ path: name, message: "must be at most 256 printable characters" }]);
  }
  return value;
}

/** The audit log, and the admin token's rotation and turn-off (API.md §8, docs/SECURITY.md). */
export const AUDIT_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/audit",
    managementRoute("read", BODY_LIMITS.none, (context) => {
      const query = new URLSearchParams(context.request.query);
      const { after, limit } = parseListQuery(query.get("after"), query.get("limit"));
      const filter = { actor: filterValue(query, "actor"), entity: filterValue(query, "entity"), key: filterValue(query, "key"), until: filterValue(query, "until") };
      const order = filterValue(query, "order");
      if (order !== undefined && order !== "newest" && order !== "oldest") throw new ServiceError("INVALID_QUERY", undefined, [{ path: "order", message: "must be newest or oldest" }]);
      // Newest first unless asked otherwise (API.md §8); `order=oldest` reads it in append order.
      return ok(context.services.accounts.audit.page(filter, after, limit, order !== "oldest"));
    }),
  ],
  [
    "GET",
    "/admin/admin-token",
    managementRoute("read", BODY_LIMITS.none, (context) => {
      const record = context.services.accounts.repository.adminToken();
      const enabled = context.services.accounts.credentials.adminTokenEnabled();
      return ok({ adminToken: { enabled, rotated: record !== undefined, token: record?.hint ?? null, changedAt: record?.changedAt ?? null } });
    }),
  ],
  [
    "POST",
    "/admin/admin-token/rotate",
    managementRoute("members", BODY_LIMITS.none, async (context) => {
      const token = newAdminToken();
      await submitChange(context, "admin-token.rotate", { digest: digestKey(token), hint: maskKey(token) });
      context.services.accounts.rewriteAdminTokenFile(token);
      return withHeaders(ok({ token }), NO_STORE);
    }),
  ],
  [
    "DELETE",
    "/admin/admin-token",
    managementRoute("members", BODY_LIMITS.none, async (context) => {
      await submitChange(context, "admin-token.disable", {});
      context.services.accounts.rewriteAdminTokenFile(null);
      return ok({ adminToken: { enabled: false } });
    }),
  ],
];
