import type { HttpMethod } from "../core/router.js";
import type { RouteSpec } from "../core/route.js";
import type { Services } from "../core/services.js";
import { AUDIT_ROUTES } from "../management/audit-routes.js";
import { MEMBER_ROUTES } from "./member-routes.js";
import { SESSION_ROUTES } from "./session-routes.js";
import { TOKEN_ROUTES } from "./token-routes.js";

/** Members, sessions, API tokens, the audit log and the admin token (API.md §8). */
export const ACCOUNT_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [...MEMBER_ROUTES, ...SESSION_ROUTES, ...TOKEN_ROUTES, ...AUDIT_ROUTES];
