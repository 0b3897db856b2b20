import { ok } from "../../http/responses.js";
import { BODY_LIMITS, managementRoute, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { ServiceError } from "../../errors/catalogue.js";
import type { Services } from "../core/services.js";
import { lastSequence, type LogTable } from "../../tracking/append-log.js";
import { encodeCursor, MAX_LIST_LIMIT } from "../../storage/cursor.js";
import { environmentOrNotFound } from "../core/route-lookups.js";

const LOGS: [string, LogTable][] = [
  ["events", "events"],
  ["featureEvents", "featureEvents"],
  ["feedback", "feedback"],
  ["promptEvents", "promptEvents"],
  ["updates", "entityUpdates"],
];
const MAX_ENTRIES = 10 * MAX_LIST_LIMIT;

/**
 * `GET /admin/environments/:envId/log-tails?entries=N` (docs/API.md §9): for each append log, the cursor from which
 * §6's paging yields its newest N entries (all of them when there are fewer). A live tail or a "newest first" list
 * starts there instead of paging through the whole log from its beginning.
 */
export const LOG_TAIL_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/environments/:envId/log-tails",
    managementRoute("read", BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const text = new URLSearchParams(context.request.query).get("entries") ?? "100";
      const entries = /^[0-9]{1,6}$/.test(text) ? Number(text) : Number.NaN;
      if (!(entries >= 0 && entries <= MAX_ENTRIES)) {
        throw new ServiceError("INVALID_QUERY", "`entries` must be an integer.", [{ path: "entries", message: `must be an integer from 0 to ${MAX_ENTRIES}` }]);
      }
      const store = context.services.store;
      const tails = Object.fromEntries(LOGS.map(([name, table]) => [name, encodeCursor(Math.max(0, lastSequence(store, table, environment.id) - entries))]));
      return ok({ tails });
    }),
  ],
];
