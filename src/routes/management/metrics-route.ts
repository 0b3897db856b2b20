import { managementRoute, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { Services } from "../core/services.js";

/**
 * `GET /metrics` (API.md §11): Prometheus text format, protected like the management API (`read`: the admin token,
 * any member or API token), because route names, rates and cluster lag describe the deployment.
 */
export const METRICS_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/metrics",
    managementRoute<Services>("read", 0, async ({ services }) => ({
      status: 200,
      headers: { "content-type": services.metrics!.contentType },
      body: await services.metrics!.render(),
    })),
  ],
];
