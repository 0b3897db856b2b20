/**
 * A backup in cluster mode (API.md §13.1): taken from one node right after a burst of tracking calls acknowledged by
 * another, it holds every one of them — the node applies what the cluster's logs held when the backup was asked for.
 * Real NATS JetStream servers (Debian's nats-server), two Switchyard nodes, the restored store served standalone.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allEvents, clusterPrefix, startClusterNode, startNatsCluster, type NatsCluster } from "../support/cluster.js";
import { createApp, request } from "../support/http.js";
import { runNode } from "../support/run-node.js";
import { CLI, NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const HAS_NATS = existsSync("/usr/sbin/nats-server") || existsSync("/usr/bin/nats-server");

describe.runIf(HAS_NATS && NATIVE_MODE === "1")("backup in cluster mode", () => {
  let nats: NatsCluster;
  let nodes: TestServer[] = [];
  let work: string;
  const prefix = clusterPrefix();

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "switchyard-backup-cluster-"));
    nats = await startNatsCluster();
    nodes = await Promise.all(["a", "b"].map((nodeId) => startClusterNode({ nats, prefix, nodeId })));
  }, 120_000);
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.kill()));
    await nats?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("holds every call another node acknowledged before the backup was asked for", async () => {
    const [a, b] = nodes as [TestServer, TestServer];
    const app = await createApp(a.url, a.adminToken);
    const burst = await Promise.all(
      Array.from({ length: 200 }, (_, n) => request(a.url, "POST", "/event", { token: app.production.secretKey, body: { event: `burst-${n}`, userId: `u-${n % 7}` } })),
    );
    expect(burst.every((reply) => reply.status === 200)).toBe(true);
    const file = join(work, "node-b.backup");
    const backup = await runNode([CLI, "backup", "--out", file, "--url", b.url], { env: { PATH: process.env.PATH ?? "", SWITCHYARD_ADMIN_TOKEN: b.adminToken } });
    expect(backup.code, backup.stderr + backup.stdout).toBe(0);
    const dataDir = join(work, "restored");
    const restore = await runNode([CLI, "restore", file, "--data-dir", dataDir], { env: { PATH: process.env.PATH ?? "" } });
    expect(restore.code, restore.stderr).toBe(0);
    const restored = await startServer({ dataDir });
    try {
      const events = await allEvents(restored, app.production.id);
      const names = new Set(events.map((event) => event.event));
      for (let n = 0; n < 200; n++) expect(names.has(`burst-${n}`), `burst-${n}`).toBe(true);
      expect((await request(restored.url, "GET", "/features", { token: app.production.secretKey })).status).toBe(200);
    } finally {
      await restored.stop();
    }
  });
});
