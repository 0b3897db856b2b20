import { readFileSync } from "node:fs";
import { connect, credsAuthenticator, type NatsConnection, type NodeConnectionOptions } from "@nats-io/transport-node";
import type { ClusterConfig } from "../config/config.js";
import type { Logger } from "../observability/logger.js";

/** The node's NATS connection and whether it is up right now (read on every tracking call, so a plain field). */
export class ClusterConnection {
  connected = true;
  private constructor(
    readonly nc: NatsConnection,
    private readonly log: Logger,
  ) {}

  /**
   * Connects, waiting for the first server however long it takes (`waitOnFirstConnect`): a node whose cluster is
   * down still starts and evaluates from its local store. Reconnects for ever, to any server of the cluster.
   */
  static async open(config: ClusterConfig, log: Logger): Promise<ClusterConnection> {
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
    const nc = await connect(options);
    const connection = new ClusterConnection(nc, log);
    void connection.watch();
    log.info("cluster connected", { server: nc.getServer() });
    return connection;
  }

  private async watch(): Promise<void> {
    for await (const status of this.nc.status()) {
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
    if (this.nc.isClosed()) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.nc.drain().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))]);
    clearTimeout(timer);
    if (!this.nc.isClosed()) await this.nc.close();
  }
}
