/**
 * In cluster mode a backup is of this node's store, so the node first applies everything the cluster's logs held
 * when the backup was asked for (API.md §13.1): calls another node acknowledged before then are in it too.
 */
import type { ClusterNode } from "./cluster-node.js";
import { ServiceError } from "../errors/catalogue.js";

/** How long a backup waits for this node to catch up before it answers a retryable 503. */
const CATCH_UP_BOUND_MS = 10_000;

export async function applyEverythingLogged(cluster: ClusterNode, boundMs = CATCH_UP_BOUND_MS): Promise<void> {
  const sets = cluster.unpinned === undefined ? [cluster.primary] : [cluster.primary, cluster.unpinned];
  const targets: { set: (typeof sets)[number]; config: number; tracking: number }[] = [];
  try {
    for (const set of sets) {
      // Reads the streams' last sequences now: what "held when the request arrived" means.
      await set.check();
      targets.push({ set, config: set.ends.config, tracking: set.ends.tracking });
    }
  } catch {
    throw new ServiceError("CLUSTER_UNAVAILABLE", undefined, undefined, 1);
  }
  const deadline = Date.now() + boundMs;
  for (;;) {
    const behind = targets.some(({ set, config, tracking }) => {
      const positions = set.positions();
      return positions.config.applied < config || positions.tracking.applied < tracking;
    });
    if (!behind) return;
    if (Date.now() > deadline) throw new ServiceError("CLUSTER_UNAVAILABLE", "This node has not applied the cluster's logs yet; retry, or back up another node.", undefined, 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
