import { readFileSync } from "node:fs";
import { connect, credsAuthenticator, type NatsConnection, type NodeConnectionOptions } from "@nats-io/transport-node";
import type { ClusterConfig } from "../config/config.js";
import type { Logger } from "../observability/logger.js";

/**
 * The node's NATS connection and whether it is up right now (read on every tracking call, so a plain field). It
 * connects in the background: a node whose cluster is unreachable when it starts still starts, and evaluates from
 * its local store (stale but available) until NATS answers.
 */
export class ClusterConnection {
  connected = false;
  private current: NatsConnection | undefined;
  /** Resolves once the first server answered (it may take for ever). */
  readonly ready: Promise<void>;
  private closed = false;

  private constructor(
    config: ClusterConfig,
    private readonly log: Logger,
  ) {
    this.ready = this.connect(config);
  }

  /** Starts connecting; reconnects for ever, to any server of the cluster. */
  static open(config: ClusterConfig, log: Logger): ClusterConnection {
    return new ClusterConnection(config, log);
  }

  /** The connection; only once `ready` resolved (callers check `connected` first). */
  get nc(): NatsConnection {
    if (!this.current) throw new Error("not connected to NATS yet");
    return this.current;
  }

  private async connect(config: ClusterConfig): Promise<void> {
    const options: NodeConnectionOptions = {
      servers: [...config.servers],
      name: `switchyard-${config.nodeId}`,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      waitOnFirstConnect: true,
      // A server that stops answering (a partition rather than a closed socket) is noticed within about 4 s.
      pingInterval: 2_000,
      maxPingOut: 2,
    };
    if (config.credsFile !== undefined) options.authenticator = credsAuthenticator(readFileSync(config.credsFile));
    if (config.user !== undefined) Object.assign(options, { user: config.user, pass: config.password });
    if (config.token !== undefined) options.token = config.token;
    if (config.tls !== undefined) options.tls = { caFile: config.tls.caFile, certFile: config.tls.certFile, keyFile: config.tls.keyFile };
    // A URL may carry user:password@; only hosts reach the log.
    this.log.info("cluster connecting", { servers: config.servers.map((server) => server.replace(/\/\/[^@/]*@/, "//")) });
    const nc = await connect(options);
    if (this.closed) {
      await nc.close();
      return new Promise(() => {}); // stopped meanwhile: never ready
    }
    this.current = nc;
    this.connected = true;
    void this.watch(nc);
    this.log.info("cluster connected", { server: nc.getServer() });
  }

  private async watch(nc: NatsConnection): Promise<void> {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "staleConnection") {
        if (this.connected) this.log.error("cluster disconnected: tracking calls and management changes answer 503 until it is back; evaluation goes on from local rules", { server: "server" in status ? status.server : undefined });
        this.connected = false;
      } else if (status.type === "reconnect") {
        this.connected = true;
        this.log.info("cluster reconnected", { server: status.server });
      }
    }
  }

  /** Drains (flushes what is pending) for at most 2 s — NATS may be unreachable — then closes. */
  async close(): Promise<void> {
    this.closed = true;
    const nc = this.current;
    if (!nc || nc.isClosed()) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([nc.drain().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))]);
    clearTimeout(timer);
    if (!nc.isClosed()) await nc.close();
  }
}
