import type { ClusterNode } from "../cluster/cluster-node.js";
import { ClusterProjection } from "../cluster/cluster-projection.js";
import type { Config } from "../config/config.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { KvStore } from "../storage/kv.js";
import type { AppendTally } from "../tracking/append-tally.js";
import { ProjectionDriver, type ProjectionGate } from "../tracking/projection-driver.js";
import { DEFAULT_STEP_ITEMS, runProjectionStep } from "../tracking/projector.js";
import type { TrackingProjections } from "../tracking/projections.js";
import { lastAppended, projectedUpTo } from "../tracking/tracking-log-table.js";
import type { Executor } from "../serving/workers/executor.js";
import { startProjectorThread } from "../serving/workers/projector-thread.js";

export interface RunningProjection {
  gate: ProjectionGate;
  /** Projects what was appended before the call (bounded by `deadline`), then stops. */
  stop(deadline: number): Promise<void>;
}

/**
 * The projection of tracking, composed: alone, a driver that runs projection steps on a thread of their own when
 * there is a worker pool, on this thread when not; in cluster mode, the appliers of the JetStream tracking streams. Either way the evaluation cache
 * hears of changed attributes once they are projected, and /metrics shows the lag.
 */
export function startProjection(parts: {
  config: Config;
  store: KvStore;
  executor: Executor;
  tally: AppendTally;
  projections: TrackingProjections;
  cluster: ClusterNode | undefined;
  attributesChanged(environmentId: string): void;
  metrics: Metrics;
  log: Logger;
}): RunningProjection {
  const { config, store, executor, metrics, log } = parts;
  let running: RunningProjection;
  if (parts.cluster !== undefined) {
    running = { gate: new ClusterProjection(parts.cluster, config.projection), stop: async () => {} };
  } else {
    const projected = { items: 0, steps: 0 };
    const reportDropped = (error: unknown) => log.error("job failed", { error: String((error as Error)?.stack ?? error) });
    // With a worker pool (the store is shared across threads) steps get a thread of their own; without, they run inline.
    const projector = executor.kind === "pool" ? startProjectorThread({ dataDir: config.dataDir, durability: config.durability }) : undefined;
    metrics.counter("switchyard_projected_items_total", "Tracking items and evaluate events projected from the tracking log.", () => projected.items);
    const driver = new ProjectionDriver(
      {
        store,
        tally: parts.tally,
        step: () => (projector !== undefined ? projector.step(DEFAULT_STEP_ITEMS) : runProjectionStep(store, DEFAULT_STEP_ITEMS, reportDropped, parts.projections)),
        onProjected(step) {
          projected.items += step.items;
          projected.steps++;
          for (const environmentId of step.changed) parts.attributesChanged(environmentId);
        },
        maxLagMs: config.projection.maxLagMs,
        readWaitMs: config.projection.readWaitMs,
        onFault: (error) => log.error("projection step failed; retrying", { error: String((error as Error)?.stack ?? error) }),
      },
      { position: projectedUpTo(store), appended: lastAppended(store) },
    );
    running = {
      gate: driver,
      async stop(deadline) {
        await Promise.race([driver.drain(), new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref())]);
        driver.stop();
        await projector?.close();
      },
    };
  }
  const gate = running.gate;
  metrics.gauge("switchyard_projection_lag_seconds", "Age of the oldest tracking call not yet projected (0 when caught up).", () => gate.status().lagMs / 1000);
  metrics.gauge("switchyard_projection_backlog", "Tracking log records (cluster: messages) appended and not yet projected.", () => gate.status().backlog);
  return running;
}
