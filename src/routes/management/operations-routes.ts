/** Every operations route (API.md §13): backup, flags as files, the Unleash importer. */
import type { RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { Services } from "../core/services.js";
import { BACKUP_ROUTES } from "./backup-route.js";
import { FLAGS_ROUTES } from "./flags-routes.js";
import { UNLEASH_ROUTES } from "./unleash-routes.js";

export const OPERATIONS_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [...BACKUP_ROUTES, ...FLAGS_ROUTES, ...UNLEASH_ROUTES];
