import { ok } from "../../http/responses.js";
import type { RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";

/** What /health needs to know: the projection's lag, and in cluster mode the node's state (absent alone). */
interface HealthSource {
  cluster?: { status(): { caughtUp: boolean } & Record<string, unknown> };
  projection?: { status(): { lagMs: number; backlog: number } };
}

/**
 * `GET /health`: no key. Alone, it answers once the service is ready (the front end only listens then). In cluster
 * mode (API.md §11) it answers 200 only while the node is connected and caught up, 503 otherwise, with the node's
 * positions either way, so a load balancer stops sending traffic to a node that cannot replicate. Both carry how far
 * the projection of tracking is behind its log (`projection.lagMs`, `projection.backlog`).
 */
export const HEALTH_ROUTES: [HttpMethod, string, RouteSpec<unknown>][] = [
  [
    "GET",
    "/health",
    {
      access: "public",
      bodyLimit: 0,
      cors: true,
      handle: ({ services }) => {
        const source = services as HealthSource;
        const lag = source.projection?.status();
        const projection = lag === undefined ? {} : { projection: { lagMs: Math.round(lag.lagMs), backlog: lag.backlog } };
        const cluster = source.cluster;
        if (cluster === undefined) return ok(projection);
        const status = cluster.status();
        if (status.caughtUp) return ok({ cluster: status, ...projection });
        return { status: 503, headers: { "content-type": "application/json", "retry-after": "1" }, body: JSON.stringify({ success: false, cluster: status, ...projection }) };
      },
    },
  ],
];
