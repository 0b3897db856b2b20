import type { TrackingProjections } from "../tracking/projections.js";
import type { JetStreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import type { ClusterConfig } from "../config/config.js";
import type { ManagementChange } from "../management/changes.js";
import type { Logger } from "../observability/logger.js";
import type { KvStore } from "../storage/kv.js";
import { ClusterConfigLog } from "./config-log.js";
import type { ClusterConnection } from "./connection.js";
import { StreamPositions } from "./positions.js";
import { StreamCopyCheck } from "./copy-check.js";
import { DUPLICATE_WINDOW_MS, ensureStreams, type StreamNames } from "./streams.js";
import { TrackingApplier, TrackingPublisher } from "./tracking-stream.js";
import { ServiceError } from "../errors/catalogue.js";

/** A node's position in one stream set, as `/health`, the registry and `switchyard cluster status` show it. */
export interface SetPositions {
  /** `divergences`: messages of the stream copy this node reads that broke JetStream's promises (copy-check.ts). */
  config: { applied: number; last: number; lag: number; divergences: number };
  tracking: { applied: number; last: number; lag: number; divergences: number };
}

export interface StreamSetOptions {
  config: ClusterConfig;
  connection: ClusterConnection;
  names: StreamNames;
  store: KvStore;
  positions: StreamPositions;
  /** This node's name in the set: its durable consumer and its key in the set's registry bucket. */
  memberId: string;
  log: Logger;
  onConfigPublished(seconds: number): void;
  onTrackingBatch(requests: number, seconds: number): void;
  onTrackingApplied(environments: Set<string>): void;
  /** What applying tracking derives from it beside its entries (analytics, surveys). */
  projections: TrackingProjections;
  /** Filters what this node applies from the set (absent: everything). */
  accepts?: { change(change: ManagementChange): boolean; environment(environmentId: string): boolean };
}

/**
 * One set of replicated streams a node belongs to — `<prefix>_CONFIG`/`_TRACKING` and the `<prefix>_nodes` registry,
 * or a region's `<prefix>_<region>_…` — with the node's configuration log, tracking publisher and applier on it, and
 * the bookkeeping that decides "caught up" for it. A node joins one set, or two (a region's node that also serves
 * the unpinned apps, SWITCHYARD_REGION_SERVES_UNPINNED).
 */
export class StreamSet {
  readonly management: ClusterConfigLog;
  readonly publisher: TrackingPublisher;
  readonly applier: TrackingApplier;
  /** What this node saw of its tracking and configuration stream copies differing from JetStream's promises. */
  readonly trackingCopyCheck: StreamCopyCheck;
  readonly configCopyCheck: StreamCopyCheck;
  /** The streams' last sequences at the last check. */
  readonly ends = { config: 0, tracking: 0 };
  /** The streams' last sequences when the node first reached them: applied past both means caught up. */
  private startTarget: { config: number; tracking: number } | undefined;
  startupDone = false;
  /** Applied positions at the previous check, for the stall watchdog. */
  private previous = { config: -1, tracking: -1 };
  private stalledChecks = { config: 0, tracking: 0 };
  private jsm: JetStreamManager | undefined;
  registry: KV | undefined;

  constructor(private readonly options: StreamSetOptions) {
    const { config, connection, names, store, positions, log, memberId } = options;
    const jsm = () => this.jsm!;
    const copyCheck = (which: "configuration" | "tracking", stream: string) =>
      new StreamCopyCheck(DUPLICATE_WINDOW_MS, (divergence) =>
        log.error(`the ${which} stream's copy this node reads differs from what JetStream acknowledged (a NATS server fault: see docs/CLUSTER.md)`, { stream, ...divergence }),
      );
    this.configCopyCheck = copyCheck("configuration", names.config);
    this.trackingCopyCheck = copyCheck("tracking", names.tracking);
    this.management = new ClusterConfigLog({
      store,
      connection,
      jsm,
      names,
      positions,
      log,
      publishTimeoutMs: config.publishTimeoutMs,
      onPublished: options.onConfigPublished,
      copyCheck: this.configCopyCheck,
      ...(options.accepts ? { accepts: options.accepts.change } : {}),
    });
    this.publisher = new TrackingPublisher({
      connection,
      names,
      nodeId: memberId,
      publishTimeoutMs: config.publishTimeoutMs,
      log,
      onBatch: options.onTrackingBatch,
      onAcknowledged: (sequence, msgID) => this.trackingCopyCheck.acknowledged(sequence, msgID),
    });
    this.applier = new TrackingApplier({
      store,
      connection,
      jsm,
      names,
      nodeId: memberId,
      positions,
      log,
      onApplied: options.onTrackingApplied,
      projections: options.projections,
      configAppliedUpTo: (sequence) => this.management.appliedUpTo(sequence),
      copyCheck: this.trackingCopyCheck,
      ...(options.accepts ? { accepts: options.accepts.environment } : {}),
    });
  }

  get names(): StreamNames {
    return this.options.names;
  }

  get memberId(): string {
    return this.options.memberId;
  }

  /** Once NATS answers: the streams and registry (created when missing), then the consumers. */
  async begin(isStopped: () => boolean): Promise<void> {
    const { jsm, registry } = await ensureStreams(this.options.connection.nc, this.options.config, this.options.names, this.options.log);
    if (isStopped()) return;
    this.jsm = jsm;
    this.registry = registry;
    void this.management.run();
    void this.applier.run();
  }

  get ready(): boolean {
    return this.jsm !== undefined && this.registry !== undefined;
  }

  /**
   * Whether this node applied the tracking stream up to its end as JetStream holds it now (every call acknowledged
   * anywhere in the cluster before this), waiting up to `timeoutMs` for it. A node that cannot reach JetStream
   * cannot know the end: it answers true and serves what it holds (as it serves evaluation), rather than refuse.
   */
  async trackingCaughtUp(timeoutMs: number): Promise<boolean> {
    const jsm = this.jsm;
    if (jsm === undefined || !this.options.connection.connected) return true;
    let end: number;
    try {
      end = (await jsm.streams.info(this.names.tracking)).state.last_seq;
    } catch {
      return true;
    }
    await this.applier.appliedUpTo(end, timeoutMs);
    return this.applier.applied >= end;
  }

  /** Reads the streams' ends and decides whether the node caught up with this set. */
  async check(): Promise<void> {
    const jsm = this.jsm;
    if (jsm === undefined) return;
    const [config, tracking] = await Promise.all([jsm.streams.info(this.names.config), jsm.streams.info(this.names.tracking)]);
    this.ends.config = config.state.last_seq;
    this.ends.tracking = tracking.state.last_seq;
    this.startTarget ??= { ...this.ends };
    this.watchdog();
    if (!this.startupDone && this.management.applied >= this.startTarget.config && this.applier.applied >= this.startTarget.tracking) {
      this.startupDone = true;
      this.options.log.info("cluster caught up", { streams: this.names.config.replace(/_CONFIG$/, ""), config: this.management.applied, tracking: this.applier.applied });
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
      const behind = this.ends[log] > positions[log];
      this.stalledChecks[log] = behind && positions[log] === this.previous[log] ? this.stalledChecks[log] + 1 : 0;
      if (this.stalledChecks[log] >= 3) {
        this.stalledChecks[log] = 0;
        this.options.log.error("cluster consumer made no progress; restarting it from the last applied message", { stream: this.names[log], applied: positions[log], last: this.ends[log] });
        if (log === "config") this.management.restartConsumer();
        else this.applier.restartConsumer();
      }
    }
    this.previous = positions;
  }

  positions(): SetPositions {
    const configApplied = this.management.applied;
    const trackingApplied = this.applier.applied;
    const configLast = Math.max(this.ends.config, configApplied);
    const trackingLast = Math.max(this.ends.tracking, trackingApplied);
    return {
      config: { applied: configApplied, last: configLast, lag: configLast - configApplied, divergences: this.configCopyCheck.divergences },
      tracking: { applied: trackingApplied, last: trackingLast, lag: trackingLast - trackingApplied, divergences: this.trackingCopyCheck.divergences },
    };
  }

  /** Every member's last report in this set's registry, with lags against the streams' ends as this node sees them. */
  async members<T extends { config: { applied: number }; tracking: { applied: number } }>(): Promise<T[]> {
    const registry = this.registry;
    if (registry === undefined) return [];
    const reports: T[] = [];
    for (const key of await this.registryKeys()) {
      const entry = await registry.get(key);
      if (!entry || entry.length === 0) continue;
      const reported = entry.json<T>();
      reported.config = { ...reported.config, last: this.ends.config, lag: Math.max(0, this.ends.config - reported.config.applied) } as T["config"];
      reported.tracking = { ...reported.tracking, last: this.ends.tracking, lag: Math.max(0, this.ends.tracking - reported.tracking.applied) } as T["tracking"];
      reports.push(reported);
    }
    return reports;
  }

  /**
   * The registry's keys, from one stream-info request naming the bucket's subjects. Not kv.keys(): that reads the
   * bucket through an ordered consumer which ends when its pending count reaches 0, and while nodes keep reporting
   * into the bucket it can miss that moment and wait for the next idle heartbeat (a CI run saw it take over 10 s).
   */
  private async registryKeys(): Promise<string[]> {
    const prefix = `$KV.${this.options.names.registry}.`;
    let subjects: Record<string, number> | undefined;
    try {
      const info = await this.jsm!.streams.info(`KV_${this.options.names.registry}`, { subjects_filter: `${prefix}>` });
      subjects = info.state.subjects;
    } catch (error) {
      throw new ServiceError("CLUSTER_UNAVAILABLE", `The cluster's node registry did not answer: ${(error as Error).message}`, undefined, 1);
    }
    // A subject stays listed after its key was deleted (its marker); get() then finds no value and the key is skipped.
    return Object.keys(subjects ?? {}).map((subject) => subject.slice(prefix.length));
  }

  /** Stops the tracking applier, then the configuration log (which releases any wait the applier has on it). */
  async stop(): Promise<void> {
    const tracking = this.applier.stop();
    await this.management.stop();
    await tracking;
  }
}
