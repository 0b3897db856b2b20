/**
 * Cluster fixtures: a real three-server NATS JetStream cluster (bench/support/nats-cluster.ts) and Switchyard nodes
 * as real processes on 127.0.0.1, each with its own temp data dir, all on one stream prefix per test file.
 */
import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { clientCredentials, startNatsCluster, type NatsCluster } from "../../bench/support/nats-cluster.js";
import { request } from "./http.js";
import { makeDataDir, startServer, type TestServer } from "./server.js";

export { clientCredentials, startNatsCluster, type NatsCluster };

export interface ClusterNodeOptions {
  nats: NatsCluster;
  prefix: string;
  nodeId: string;
  dataDir?: string;
  /** Which servers the node is told about (default: all). */
  urls?: string;
  env?: Record<string, string>;
}

/** A unique stream prefix, so test files sharing nothing never see each other's streams. */
export function clusterPrefix(): string {
  return `T${randomBytes(4).toString("hex")}`;
}

/** Starts a Switchyard node in cluster mode; its data dir is kept (restarts reuse it) unless none was given. */
export function startClusterNode(options: ClusterNodeOptions): Promise<TestServer> {
  return startServer({
    dataDir: options.dataDir ?? makeDataDir(),
    keepData: true,
    env: {
      SWITCHYARD_CLUSTER_URL: options.urls ?? options.nats.urls,
      SWITCHYARD_NODE_ID: options.nodeId,
      SWITCHYARD_CLUSTER_PREFIX: options.prefix,
      SWITCHYARD_CLUSTER_REPLICAS: "3",
      SWITCHYARD_CLUSTER_PUBLISH_TIMEOUT_MS: "3000",
      ...(options.nats.auth ? { SWITCHYARD_CLUSTER_USER: options.nats.auth.user, SWITCHYARD_CLUSTER_PASSWORD: options.nats.auth.password } : {}),
      ...(options.nats.caFile ? { SWITCHYARD_CLUSTER_TLS_CA: options.nats.caFile } : {}),
      ...options.env,
    },
  });
}

/** Polls `read` until `accept` holds (reads through real HTTP); throws with the last value after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await read();
    if (accept(last)) return last;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last).slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Every event of an environment on a node, following cursors. A node still applying what the cluster acknowledged
 * before the read answers a retryable 503 (PROJECTION_BEHIND): that reads as "none yet", for `eventually` to ask again.
 */
export async function allEvents(server: TestServer, environmentId: string): Promise<{ event: string; userId: string }[]> {
  const events: { event: string; userId: string }[] = [];
  let after = "";
  for (;;) {
    const reply = await request(server.url, "GET", `/admin/environments/${environmentId}/events?limit=1000${after ? `&after=${after}` : ""}`, { token: server.adminToken });
    if (reply.status === 503 && reply.body?.error?.code === "PROJECTION_BEHIND") return [];
    if (reply.status !== 200) throw new Error(`events answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    events.push(...reply.body.events);
    if (reply.body.events.length < 1000) return events;
    after = reply.body.next;
  }
}

/**
 * Waits until both streams of `prefix` have a leader and every other server's copy is current: after a NATS server
 * was killed and started again, changes published before that may find no leader yet (an immediate, retryable 503).
 */
export async function waitStreamsCurrent(nats: NatsCluster, prefix: string, timeoutMs = 30_000): Promise<void> {
  const nc = await connect({ servers: nats.urls, ...clientCredentials(nats) });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 5_000 });
    const current = async (stream: string) => {
      const cluster = (await jsm.streams.info(stream).catch(() => undefined))?.cluster;
      const replicas = cluster?.replicas ?? [];
      return cluster?.leader !== undefined && replicas.length === nats.servers.length - 1 && replicas.every((replica) => replica.current && !replica.offline);
    };
    await eventually(async () => (await current(`${prefix}_CONFIG`)) && (await current(`${prefix}_TRACKING`)), (ready) => ready, timeoutMs);
  } finally {
    await nc.close();
  }
}
