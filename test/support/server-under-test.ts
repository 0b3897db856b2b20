/**
 * The service an SDK suite talks to. Alone by default; with SWITCHYARD_TEST_CLUSTER=1 a real three-server NATS
 * cluster and two Switchyard nodes in cluster mode, where the suite writes rules through one node (`writer`) and
 * points the SDKs at the other (`server`): what issue 19 asks of every SDK suite.
 */
import { clusterPrefix, startClusterNode, startNatsCluster } from "./cluster.js";
import { startServer, type TestServer } from "./server.js";

export const CLUSTER_MODE = process.env.SWITCHYARD_TEST_CLUSTER === "1";

export interface ServerUnderTest {
  /** Where the SDKs point. */
  server: TestServer;
  /** Where rules are written (another node in cluster mode). */
  writer: TestServer;
  stop(): Promise<void>;
}

export async function startServerUnderTest(): Promise<ServerUnderTest> {
  if (!CLUSTER_MODE) {
    const server = await startServer();
    return { server, writer: server, stop: async () => void (await server.stop()) };
  }
  const nats = await startNatsCluster();
  const prefix = clusterPrefix();
  const [writer, server] = await Promise.all(["writer", "server"].map((nodeId) => startClusterNode({ nats, prefix, nodeId })));
  return {
    server: server!,
    writer: writer!,
    async stop() {
      if (process.env.CLUSTER_DEBUG) for (const node of [writer!, server!]) console.log(node.output.filter((line) => !line.includes('"listening"')).join("\n"));
      await Promise.all([server!.stop(), writer!.stop()]);
      await nats.stop();
    },
  };
}
