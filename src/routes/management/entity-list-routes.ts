import { ok } from "../../http/responses.js";
import { BODY_LIMITS, managementRoute, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { ServiceError } from "../../errors/catalogue.js";
import type { Services } from "../core/services.js";
import { key, lastKeyPart, prefixRange } from "../../storage/kv.js";
import type { CompanyRecord, UserRecord } from "../../tracking/tracking-records.js";
import { checkListLimit, DEFAULT_LIST_LIMIT } from "../../storage/cursor.js";
import { environmentOrNotFound } from "../core/route-lookups.js";

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * `GET /admin/environments/:envId/companies` and `/users` with `?prefix=&after=&limit=` (docs/API.md §9, for the
 * dashboard's lists): tracked companies or users in id order (UTF-8 bytes), a page at a time straight from the key
 * range, so 100,000 companies cost one page's reads. `prefix` narrows to ids starting with it; `after` is the last id
 * of the previous page; `next` is null on the last page.
 */
function listRoute(table: "companies" | "users"): RouteSpec<Services> {
  return managementRoute("read", BODY_LIMITS.none, (context) => {
    const environment = environmentOrNotFound(context);
    const query = new URLSearchParams(context.request.query);
    const prefix = query.get("prefix") ?? "";
    const after = query.get("after") ?? undefined;
    const limitText = query.get("limit");
    const limit = limitText === null || limitText === "" ? DEFAULT_LIST_LIMIT : checkListLimit(/^[0-9]{1,10}$/.test(limitText) ? Number(limitText) : Number.NaN);
    if (prefix.includes("\u0000") || after?.includes("\u0000")) throw new ServiceError("INVALID_QUERY", "Ids never contain NUL.", [{ path: prefix.includes("\u0000") ? "prefix" : "after", message: "must not contain NUL" }]);
    const all = prefixRange(environment.id);
    const lower = key(environment.id, prefix);
    const start = after !== undefined && after >= prefix ? `${key(environment.id, after)}\u0000` : lower;
    const end = prefix === "" ? all.end : `${lower}\uffff`;
    const items = [];
    for (const entry of context.services.store.table(table).range({ start: start < all.start ? all.start : start, end, limit: limit + 1 })) {
      const record = entry.value;
      items.push({ id: lastKeyPart(entry.key), attributes: record.attributes, firstSeen: iso(record.firstSeen), lastSeen: iso(record.lastSeen) });
    }
    const more = items.length > limit;
    if (more) items.pop();
    return ok({ [table]: items, next: more ? items[items.length - 1]!.id : null });
  });
}

export const ENTITY_LIST_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["GET", "/admin/environments/:envId/companies", listRoute("companies")],
  ["GET", "/admin/environments/:envId/users", listRoute("users")],
];
