import type { JetStreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import type { ClusterConfig } from "../config/config.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { KvStore } from "../storage/kv.js";
import { ServiceError } from "../errors/catalogue.js";
import { createJobContext, type JobContext } from "../jobs/job-context.js";
import { ClusterConfigLog } from "./config-log.js";
import { ClusterConnection } from "./connection.js";
import { StreamPositions } from "./positions.js";
import { ensureStreams, streamNames, type StreamNames } from "./streams.js";
import { TrackingApplier, TrackingPublisher } from "./tracking-log.js";

/** How often the node compares its positions with the streams' ends and reports them in the registry. */
const CHECK_MS = 1_000;

/** What a node reports about itself (`/health`, the registry, `switchyard cluster status`). */
export interface NodeStatus {
  nodeId: string;
  connected: boolean;
  /** Everything the streams held when the node started has been applied, and it is connected. */
  caughtUp: boolean;
  config: { applied: number; last: number; lag: number };
  tracking: { applied: number; last: number; lag: number };
  at: string;
}

/**
 * One Switchyard node of a cluster (API.md §11): its NATS connection, the configuration log (also the node's
 * ManagementLog), the tracking log's publisher and applier, and the periodic check that decides "caught up".
 */
export class ClusterNode {
  private readonly stream = { config: 0, tracking: 0 };
  /** The streams' last sequences when the node first reached them: applied past both means caught up. */
  private startTarget: { config: number; tracking: number } | undefined;
  private startupDone = false;
  /** Applied positions at the previous check, for the stall watchdog. */
  private previous = { config: -1, tracking: -1 };
  private stalledChecks = { config: 0, tracking: 0 };
  private timer: NodeJS.Timeout | undefined;
  /** Evaluates `/features/enabled` on the main thread, whose events go to the tracking log (replicated-tracking.ts). */
  readonly jobContext: JobContext;

  /** Set once the node reached NATS and the streams exist. */
  private jsm: JetStreamManager | undefined;
  private registry: KV | undefined;

  private constructor(
    readonly config: ClusterConfig,
    readonly connection: ClusterConnection,
    readonly names: StreamNames,
    readonly management: ClusterConfigLog,
    readonly publisher: TrackingPublisher,
    readonly applier: TrackingApplier,
    private readonly log: Logger,
    store: KvStore,
  ) {
    this.jobContext = createJobContext(store);
  }

  /**
   * Builds the node and starts reaching NATS in the background: the node serves at once (evaluation from its store;
   * tracking and changes answer 503 until it is connected; `/health` says not caught up).
   */
  static start(config: ClusterConfig, store: KvStore, log: Logger, metrics: Metrics, onTrackingApplied: (environments: Set<string>) => void): ClusterNode {
    const connection = ClusterConnection.open(config, log);
    const names = streamNames(config.prefix, config.region);
    let node: ClusterNode | undefined;
    const jsm = () => node!.jsm!;
    const positions = new StreamPositions(store);
    const configPublish = metrics.histogram("switchyard_cluster_publish_seconds", "Time from publishing to JetStream's acknowledgement.", [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5], ["log"]);
    const configLatency = configPublish.labels("config");
    const trackingLatency = configPublish.labels("tracking");
    const management = new ClusterConfigLog({ store, connection, jsm, names, positions, log, publishTimeoutMs: config.publishTimeoutMs, onPublished: (seconds) => configLatency.observe(seconds) });
    const publisher = new TrackingPublisher({
      connection,
      names,
      nodeId: config.nodeId,
      publishTimeoutMs: config.publishTimeoutMs,
      log,
      onBatch: (requests, seconds) => {
        metrics.tracking.batches++;
        metrics.tracking.requests += requests;
        trackingLatency.observe(seconds);
      },
    });
    const applier = new TrackingApplier({
      store,
      connection,
      jsm,
      names,
      nodeId: config.nodeId,
      positions,
      log,
      onApplied: onTrackingApplied,
      configAppliedUpTo: (sequence) => management.appliedUpTo(sequence),
    });
    node = new ClusterNode(config, connection, names, management, publisher, applier, log, store);
    const started = node;
    metrics.labelledGauge("switchyard_cluster_lag_messages", "Messages in each replicated stream not yet applied on this node.", ["log"], () => {
      const status = started.status();
      return [
        [{ log: "config" }, status.config.lag],
        [{ log: "tracking" }, status.tracking.lag],
      ];
    });
    metrics.gauge("switchyard_cluster_connected", "1 while the node is connected to NATS.", () => (connection.connected ? 1 : 0));
    metrics.gauge("switchyard_cluster_caught_up", "1 once the node applied everything the streams held when it started, and is connected.", () => (started.status().caughtUp ? 1 : 0));
    started.began = started.begin();
    started.began.catch((error: unknown) => log.error("cluster start failed", { error: String(error) }));
    return started;
  }

  private began: Promise<void> = Promise.resolve();

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
    const { jsm, registry } = await ensureStreams(this.connection.nc, this.config, this.names, this.log);
    if (this.stopped) return;
    this.jsm = jsm;
    this.registry = registry;
    void this.management.run();
    void this.applier.run();
    await this.check();
    this.timer = setInterval(() => void this.check(), CHECK_MS);
    this.timer.unref();
  }

  /** Reads the streams' ends, decides whether the node caught up, and reports its position in the registry. */
  private async check(): Promise<void> {
    const { jsm, registry } = this;
    if (!this.connection.connected || jsm === undefined || registry === undefined) return;
    try {
      const [config, tracking] = await Promise.all([jsm.streams.info(this.names.config), jsm.streams.info(this.names.tracking)]);
      this.stream.config = config.state.last_seq;
      this.stream.tracking = tracking.state.last_seq;
      this.startTarget ??= { ...this.stream };
      this.watchdog();
      if (!this.startupDone && this.management.applied >= this.startTarget.config && this.applier.applied >= this.startTarget.tracking) {
        this.startupDone = true;
        this.log.info("cluster caught up", { config: this.management.applied, tracking: this.applier.applied });
      }
      await registry.put(this.config.nodeId, JSON.stringify(this.status()));
    } catch (error) {
      this.log.error("cluster check failed", { error: String(error) });
    }
  }

  /**
   * A consumer that has messages to deliver and made no progress for three checks in a row is started again from
   * the last applied message. JetStream's consumers recover from most failovers by themselves; this covers the
   * rest (an ordered consumer that stopped delivering without an error after a server was killed).
   */
  private watchdog(): void {
    const positions = { config: this.management.applied, tracking: this.applier.applied };
    for (const log of ["config", "tracking"] as const) {
      const behind = this.stream[log] > positions[log];
      this.stalledChecks[log] = behind && positions[log] === this.previous[log] ? this.stalledChecks[log] + 1 : 0;
      if (this.stalledChecks[log] >= 3) {
        this.stalledChecks[log] = 0;
        this.log.error("cluster consumer made no progress; restarting it from the last applied message", { log, applied: positions[log], last: this.stream[log] });
        if (log === "config") this.management.restartConsumer();
        else this.applier.restartConsumer();
      }
    }
    this.previous = positions;
  }

  status(): NodeStatus {
    const configApplied = this.management.applied;
    const trackingApplied = this.applier.applied;
    const configLast = Math.max(this.stream.config, configApplied);
    const trackingLast = Math.max(this.stream.tracking, trackingApplied);
    return {
      nodeId: this.config.nodeId,
      connected: this.connection.connected,
      caughtUp: this.startupDone && this.connection.connected,
      config: { applied: configApplied, last: configLast, lag: configLast - configApplied },
      tracking: { applied: trackingApplied, last: trackingLast, lag: trackingLast - trackingApplied },
      at: new Date().toISOString(),
    };
  }

  /** Every node's last report from the registry, with lags against the streams' ends as this node sees them. */
  async clusterStatus(): Promise<{ streams: { config: number; tracking: number }; nodes: NodeStatus[] }> {
    const registry = this.registry;
    if (!this.connection.connected || registry === undefined) throw new ServiceError("CLUSTER_UNAVAILABLE", undefined, undefined, 1);
    await this.check();
    const nodes: NodeStatus[] = [];
    // keys() reads the bucket through an ordered consumer; after a server failover it can deliver a key twice.
    const nodeIds = new Set<string>();
    for await (const nodeId of await registry.keys()) nodeIds.add(nodeId);
    for (const nodeId of nodeIds) {
      const entry = await registry.get(nodeId);
      if (!entry || entry.length === 0) continue;
      const reported = entry.json<NodeStatus>();
      reported.config = { ...reported.config, last: this.stream.config, lag: Math.max(0, this.stream.config - reported.config.applied) };
      reported.tracking = { ...reported.tracking, last: this.stream.tracking, lag: Math.max(0, this.stream.tracking - reported.tracking.applied) };
      nodes.push(reported);
    }
    nodes.sort((a, b) => a.nodeId.localeCompare(b.nodeId));
    return { streams: { ...this.stream }, nodes };
  }

  private stopped = false;

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    // The tracking applier first stops taking batches; the configuration log then releases any wait on it.
    const tracking = this.applier.stop();
    await this.management.stop();
    await tracking;
    await this.connection.close();
  }
}
