import { ok } from "../../http/responses.js";
import { managementRoute, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { Services } from "../core/services.js";

/**
 * `GET /admin/cluster` (`switchyard cluster status`): every node's last reported position in both logs and its lag
 * behind the streams' ends. A node running alone answers `{cluster: null}`.
 */
export const CLUSTER_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/cluster",
    managementRoute<Services>("read", 0, async ({ services }) => {
      if (services.cluster === undefined) return ok({ cluster: null });
      return ok({ cluster: { self: services.cluster.nodeId, ...(await services.cluster.clusterStatus()) } });
    }),
  ],
];
