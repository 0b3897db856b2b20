/**
 * Every route of the service, by audience, in one place (docs/ARCHITECTURE.md "Who may import whom"). A route table
 * is added here and nowhere else; which port serves it follows from its path (API.md §9).
 */
import { Router, type HttpMethod } from "./core/router.js";
import type { RouteSpec } from "./core/route.js";
import type { Services } from "./core/services.js";
import { HEALTH_ROUTES } from "./sdk/health-routes.js";
import { EVALUATION_ROUTES } from "./sdk/evaluation-routes.js";
import { createRulesRoutes } from "./sdk/rules-route.js";
import { TRACKING_ROUTES } from "./sdk/tracking-routes.js";
import { LIVE_ROUTES } from "./sdk/live-routes.js";
import { OPT_IN_ROUTES } from "./sdk/opt-in-route.js";
import { PROMPTING_ROUTES } from "./sdk/prompting-routes.js";
import { OFREP_ROUTES } from "./sdk/ofrep-routes.js";
import { ADMIN_ROUTES, TRACKED_DATA_ROUTES } from "./management/admin-routes.js";
import { ENVIRONMENT_FEATURE_ROUTES } from "./management/environment-feature-routes.js";
import { GOVERNANCE_ROUTES } from "./management/governance-routes.js";
import { ROLLOUT_ROUTES } from "./management/rollout-routes.js";
import { WEBHOOK_ROUTES } from "./management/webhook-routes.js";
import { RELEASE_FLOW_ROUTES } from "./management/release-flow-routes.js";
import { ENTITY_LIST_ROUTES } from "./management/entity-list-routes.js";
import { LOG_TAIL_ROUTES } from "./management/log-tail-route.js";
import { ANALYTICS_ROUTES } from "./management/analytics-routes.js";
import { STAGE_ROUTES } from "./management/stage-routes.js";
import { SURVEY_ROUTES } from "./management/survey-routes.js";
import { SEGMENT_ROUTES } from "./management/segment-routes.js";
import { CLUSTER_ROUTES } from "./management/cluster-routes.js";
import { METRICS_ROUTES } from "./management/metrics-route.js";
import { OPERATIONS_ROUTES } from "./management/operations-routes.js";
import { ACCOUNT_ROUTES } from "./accounts/account-routes.js";
import { REFLAG_API_ROUTES } from "./reflag-api/reflag-routes.js";
import { MCP_ROUTES } from "./mcp/mcp-routes.js";
import { createDashboardRoutes } from "./dashboard/dashboard-routes.js";
import { CLI_BROWSER_ROUTES } from "./dashboard/cli-browser-routes.js";

type RouteTable = [HttpMethod, string, RouteSpec<Services>][];

/** What SDKs and browsers call with an environment's key (API.md §2–§5, §14); `/health` is on every port. */
function sdkRoutes(): RouteTable {
  return [...createRulesRoutes(), ...EVALUATION_ROUTES, ...TRACKING_ROUTES, ...LIVE_ROUTES, ...OPT_IN_ROUTES, ...PROMPTING_ROUTES, ...OFREP_ROUTES];
}

/**
 * Every `/admin/...` route and the Reflag surface under `/api`, with its permission: what docs/SECURITY.md's route ×
 * role table lists.
 */
export const MANAGEMENT_ROUTES: RouteTable = [
  ...ADMIN_ROUTES,
  ...ENVIRONMENT_FEATURE_ROUTES,
  ...GOVERNANCE_ROUTES,
  ...ROLLOUT_ROUTES,
  ...WEBHOOK_ROUTES,
  ...RELEASE_FLOW_ROUTES,
  ...TRACKED_DATA_ROUTES,
  ...ENTITY_LIST_ROUTES,
  ...LOG_TAIL_ROUTES,
  ...ANALYTICS_ROUTES,
  ...STAGE_ROUTES,
  ...SURVEY_ROUTES,
  ...SEGMENT_ROUTES,
  ...ACCOUNT_ROUTES,
  ...REFLAG_API_ROUTES,
  ...CLUSTER_ROUTES,
  ...OPERATIONS_ROUTES,
];

/**
 * Paths of the admin surface (API.md §9): the management APIs (MCP included, with its OAuth metadata under
 * `/.well-known`), metrics, the dashboard and the `/` that leads to it, and the CLI's browser ends (§10).
 */
export function isAdminSurface(pattern: string): boolean {
  return pattern === "/" || /^\/(admin|api|metrics|dashboard|cli-login|envs|\.well-known)(\/|$)/.test(pattern);
}

/**
 * The routers of the SDK port and of the admin port (API.md §9): with SWITCHYARD_ADMIN_PORT set, the management
 * API and the dashboard are added only to the admin port's router and the rest only to the SDK port's (`/health`
 * to both); without it, one router has everything. Routes go where their path prefix says, so a route added later
 * lands on the right port without a second list.
 */
export function buildRouters(splitAdmin: boolean, sdkPort: () => number | undefined): { sdk: Router<RouteSpec<Services>>; admin: Router<RouteSpec<Services>> } {
  const sdk = new Router<RouteSpec<Services>>();
  const admin = splitAdmin ? new Router<RouteSpec<Services>>() : sdk;
  for (const [method, pattern, spec] of HEALTH_ROUTES) {
    sdk.add(method, pattern, spec as RouteSpec<Services>);
    if (splitAdmin) admin.add(method, pattern, spec as RouteSpec<Services>);
  }
  const dashboard = createDashboardRoutes({ sdkPort: () => (splitAdmin ? sdkPort() : undefined) }) as RouteTable;
  for (const [method, pattern, spec] of [...METRICS_ROUTES, ...MANAGEMENT_ROUTES, ...MCP_ROUTES, ...dashboard, ...CLI_BROWSER_ROUTES, ...sdkRoutes()]) {
    (isAdminSurface(pattern) ? admin : sdk).add(method, pattern, spec);
  }
  return { sdk, admin };
}
