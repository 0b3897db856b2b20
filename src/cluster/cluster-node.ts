import type { TrackingProjections } from "../tracking/projections.js";
import type { ClusterConfig } from "../config/config.js";
import type { ManagementLog } from "../management/management-log.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { KvStore } from "../storage/kv.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { ServiceError } from "../errors/catalogue.js";
import { createJobContext, type JobContext } from "../serving/job-context.js";
import { ClusterConnection } from "./connection.js";
import { StreamPositions } from "./positions.js";
import { streamNames } from "./streams.js";
import { StreamSet, type SetPositions } from "./stream-set.js";
import { concernsUnpinnedApp, environmentIsUnpinned } from "./unpinned-scope.js";
import { RoutedManagementLog } from "./routed-management-log.js";

/** How often the node compares its positions with the streams' ends and reports them in the registry. */
const CHECK_MS = 1_000;

/**
 * What a node reports about itself (`/health`, the registry, `switchyard cluster status`). `config` and `tracking`
 * are its positions in the stream set of the registry it is read from: in its own set's (its region's, or the
 * unregioned one) for `/health`. A region's node that also serves the unpinned apps adds `unpinned`, its positions
 * in the unregioned streams, and reports in the unregioned registry too, there with those positions as `config` and
 * `tracking` and `region` telling where it comes from.
 */
export interface NodeStatus extends SetPositions {
  nodeId: string;
  /** The node's region (SWITCHYARD_REGION); absent for a node of no region. */
  region?: string;
  connected: boolean;
  /** Everything the streams held when the node started has been applied (in every set it joined), and it is connected. */
  caughtUp: boolean;
  /** Only on a node with SWITCHYARD_REGION_SERVES_UNPINNED: its positions in the unregioned streams. */
  unpinned?: SetPositions & { caughtUp: boolean };
  at: string;
}

/** One stream set's view in `GET /admin/cluster`: the streams' ends and every node registered in the set. */
export interface SetStatus {
  streams: { config: number; tracking: number };
  nodes: NodeStatus[];
}

/**
 * One Switchyard node of a cluster (API.md §11): its NATS connection, the stream set(s) it joined (each with its
 * configuration log, tracking publisher and applier), and the periodic check that decides "caught up".
 */
export class ClusterNode {
  private timer: NodeJS.Timeout | undefined;
  /** Evaluates `/features/enabled` on the main thread, whose events go to the tracking log (replicated-tracking-log.ts). */
  readonly jobContext: JobContext;
  /** Where management routes send their changes: the primary set's log, or a router over both sets. */
  readonly management: ManagementLog;
  private constructor(
    readonly config: ClusterConfig,
    readonly connection: ClusterConnection,
    /** The node's own set: its region's streams, or the unregioned ones for a node of no region. */
    readonly primary: StreamSet,
    /** The unregioned set, joined besides the region's by a node with SWITCHYARD_REGION_SERVES_UNPINNED. */
    readonly unpinned: StreamSet | undefined,
    private readonly log: Logger,
    private readonly tenancy: TenancyRepository,
    store: KvStore,
  ) {
    this.jobContext = createJobContext(store);
    this.management = unpinned === undefined ? primary.management : new RoutedManagementLog(primary.management, unpinned.management, (change) => concernsUnpinnedApp(change, this.tenancy));
  }

  /**
   * Builds the node and starts reaching NATS in the background: the node serves at once (evaluation from its store;
   * tracking and changes answer 503 until it is connected; `/health` says not caught up).
   */
  static start(
    config: ClusterConfig,
    store: KvStore,
    log: Logger,
    metrics: Metrics,
    projections: TrackingProjections,
    onTrackingApplied: (environments: Set<string>) => void,
  ): ClusterNode {
    const connection = ClusterConnection.open(config, log);
    const publish = metrics.histogram("switchyard_cluster_publish_seconds", "Time from publishing to JetStream's acknowledgement.", [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5], ["log"]);
    const configLatency = publish.labels("config");
    const trackingLatency = publish.labels("tracking");
    const tenancy = new TenancyRepository(store);
    const set = (names: ReturnType<typeof streamNames>, positions: StreamPositions, memberId: string, unpinnedOnly: boolean) =>
      new StreamSet({
        config,
        connection,
        names,
        store,
        positions,
        memberId,
        log,
        onConfigPublished: (seconds) => configLatency.observe(seconds),
        onTrackingBatch: (requests, seconds) => {
          metrics.tracking.batches++;
          metrics.tracking.requests += requests;
          trackingLatency.observe(seconds);
        },
        onTrackingApplied,
        projections,
        // The unregioned streams also carry the accounts of the nodes of no region: not this node's (its region's
        // accounts are its own), so only unpinned apps' changes and tracking are taken from them.
        ...(unpinnedOnly ? { accepts: { change: (change) => concernsUnpinnedApp(change, tenancy), environment: (environmentId) => environmentIsUnpinned(environmentId, tenancy) } } : {}),
      });
    const primary = set(streamNames(config.prefix, config.region), new StreamPositions(store), config.nodeId, false);
    // In the unregioned set the node is `<region>_<node id>`, so it cannot take the consumer or registry key of a
    // node of no region that has the same id.
    const unpinned = config.servesUnpinned && config.region !== undefined ? set(streamNames(config.prefix), new StreamPositions(store, "cluster.unpinned"), `${config.region}_${config.nodeId}`, true) : undefined;
    const node = new ClusterNode(config, connection, primary, unpinned, log, tenancy, store);
    metrics.labelledGauge("switchyard_cluster_lag_messages", "Messages in each replicated stream not yet applied on this node.", ["log"], () => {
      const status = node.status();
      return [
        [{ log: "config" }, status.config.lag],
        [{ log: "tracking" }, status.tracking.lag],
        ...(status.unpinned
          ? ([
              [{ log: "unpinned_config" }, status.unpinned.config.lag],
              [{ log: "unpinned_tracking" }, status.unpinned.tracking.lag],
            ] as [Record<string, string>, number][])
          : []),
      ];
    });
    metrics.gauge("switchyard_cluster_stream_divergences", "Messages of the stream copies this node read (tracking and configuration) that broke JetStream's promises (a NATS server fault: docs/CLUSTER.md).", () =>
      node.sets.reduce((sum, joined) => sum + joined.trackingCopyCheck.divergences + joined.configCopyCheck.divergences, 0),
    );
    metrics.gauge("switchyard_cluster_connected", "1 while the node is connected to NATS.", () => (connection.connected ? 1 : 0));
    metrics.gauge("switchyard_cluster_caught_up", "1 once the node applied everything the streams held when it started, and is connected.", () => (node.status().caughtUp ? 1 : 0));
    node.began = node.begin();
    node.began.catch((error: unknown) => log.error("cluster start failed", { error: String(error) }));
    return node;
  }

  private began: Promise<void> = Promise.resolve();

  /** Every set this node joined, its own first. */
  get sets(): StreamSet[] {
    return this.unpinned === undefined ? [this.primary] : [this.primary, this.unpinned];
  }

  /**
   * The set an environment's tracking goes to: the unregioned one for an unpinned app's environment on a node that
   * serves them, the node's own otherwise (a region-pinned app's tracking never reaches the unregioned streams).
   */
  trackingSet(environmentId: string): StreamSet {
    return this.unpinned !== undefined && environmentIsUnpinned(environmentId, this.tenancy) ? this.unpinned : this.primary;
  }

  /**
   * Resolves once the node reached NATS and its streams, or after `ms` (NATS unreachable: the node then serves from
   * its store and joins when NATS answers). Lets a normal start listen only when changes can be replicated.
   */
  async readyWithin(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.began.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  /** Once NATS answers: the streams, the consumers, the periodic check. */
  private async begin(): Promise<void> {
    await this.connection.ready;
    for (const set of this.sets) await set.begin(() => this.stopped);
    if (this.stopped) return;
    await this.check();
    this.timer = setInterval(() => void this.check(), CHECK_MS);
    this.timer.unref();
  }

  /** Reads the streams' ends, decides whether the node caught up, and reports its position in each set's registry. */
  private async check(): Promise<void> {
    if (!this.connection.connected || !this.sets.every((set) => set.ready)) return;
    try {
      await Promise.all(this.sets.map((set) => set.check()));
      const status = this.status();
      await this.primary.registry!.put(this.config.nodeId, JSON.stringify(status));
      if (this.unpinned !== undefined) {
        // There, `config`, `tracking` and `caughtUp` are the node's in the unregioned set, as its other members read them.
        const { unpinned: positions, ...rest } = status;
        await this.unpinned.registry!.put(this.unpinned.memberId, JSON.stringify({ ...rest, caughtUp: positions!.caughtUp, config: positions!.config, tracking: positions!.tracking }));
      }
    } catch (error) {
      this.log.error("cluster check failed", { error: String(error) });
    }
  }

  status(): NodeStatus {
    const connected = this.connection.connected;
    const unpinned = this.unpinned;
    return {
      nodeId: this.config.nodeId,
      ...(this.config.region !== undefined ? { region: this.config.region } : {}),
      connected,
      caughtUp: connected && this.sets.every((set) => set.startupDone),
      ...this.primary.positions(),
      ...(unpinned !== undefined ? { unpinned: { ...unpinned.positions(), caughtUp: connected && unpinned.startupDone } } : {}),
      at: new Date().toISOString(),
    };
  }

  /**
   * Every node's last report from the registry, with lags against the streams' ends as this node sees them; on a
   * node that also serves the unpinned apps, the same for the unregioned set under `unpinned`.
   */
  async clusterStatus(): Promise<SetStatus & { unpinned?: SetStatus }> {
    if (!this.connection.connected || !this.sets.every((set) => set.ready)) throw new ServiceError("CLUSTER_UNAVAILABLE", undefined, undefined, 1);
    await this.check();
    const ofSet = async (set: StreamSet): Promise<SetStatus> => {
      const nodes = await set.members<NodeStatus>();
      nodes.sort((a, b) => a.nodeId.localeCompare(b.nodeId) || (a.region ?? "").localeCompare(b.region ?? ""));
      return { streams: { ...set.ends }, nodes };
    };
    const primary = await ofSet(this.primary);
    return this.unpinned === undefined ? primary : { ...primary, unpinned: await ofSet(this.unpinned) };
  }

  private stopped = false;

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await Promise.all(this.sets.map((set) => set.stop()));
    await this.connection.close();
  }
}
