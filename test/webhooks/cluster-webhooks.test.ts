/**
 * Webhooks on a real three-server NATS cluster with three Switchyard nodes (API.md §16, docs/WEBHOOKS.md): every node
 * runs a dispatcher, yet each delivery is attempted by one node at a time — the one whose claim the replicated log
 * granted — so a healthy cluster sends each change exactly once, in order. Killing the node that is delivering loses
 * nothing: its lease runs out, another node claims the webhook and sends the delivery, with the same webhook-id
 * (at least once: the killed node's attempt may have reached the receiver).
 */
import { rmSync } from "node:fs";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterPrefix, eventually, startClusterNode, startNatsCluster, type NatsCluster } from "../support/cluster.js";
import { createApp, request } from "../support/http.js";
import type { TestServer } from "../support/server.js";
import { startReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ENV = { SWITCHYARD_WEBHOOK_ALLOW: "127.0.0.1/32", SWITCHYARD_WEBHOOK_TIMEOUT_MS: "1500", SWITCHYARD_WEBHOOK_RETRY_BASE_MS: "100" };
const rulesFor = (n: number) => [{ filter: { type: "context", field: "user.id", operator: "IS", values: [`u${n}`] } }];

describe("webhooks in cluster mode", () => {
  let nats: NatsCluster;
  const prefix = clusterPrefix();
  let nodes: TestServer[];
  let keys: Awaited<ReturnType<typeof createApp>>;
  const receivers: WebhookReceiver[] = [];
  const admin = (node: TestServer, method: string, path: string, body?: unknown) => request(node.url, method, path, { token: node.adminToken, ...(body !== undefined ? { body } : {}) });
  const hooks = () => `/admin/apps/${keys.app.id}/webhooks`;

  beforeAll(async () => {
    nats = await startNatsCluster();
    nodes = await Promise.all(["a", "b", "c"].map((nodeId) => startClusterNode({ nats, prefix, nodeId, env: ENV })));
    keys = await createApp(nodes[0]!.url, nodes[0]!.adminToken);
  }, 150_000);
  afterAll(async () => {
    await Promise.all((nodes ?? []).map((node) => node.kill()));
    await nats?.stop();
    for (const node of nodes ?? []) rmSync(node.dataDir, { recursive: true, force: true });
    for (const each of receivers) await each.close();
  });

  it("sends each change once, in order, whichever node it was made through", { timeout: 60_000 }, async () => {
    const sink = await startReceiver();
    receivers.push(sink);
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    const created = await admin(a, "POST", hooks(), { url: sink.url, events: ["targeting.changed"] });
    expect(created.status).toBe(200);
    const { secret } = created.body;
    expect((await admin(b, "PUT", `/admin/apps/${keys.app.id}/features/spread`, {})).status).toBe(200);
    for (const [index, node] of [a, b, c, a, b, c].entries()) {
      await eventually(() => admin(node, "GET", `/admin/environments/${keys.production.id}/features/spread`), (reply) => reply.body.targeting?.version === index);
      expect((await admin(node, "PUT", `/admin/environments/${keys.production.id}/features/spread/targeting`, { rules: rulesFor(index) })).status).toBe(200);
    }
    await sink.waitFor(6, 30_000);
    await sleep(2000);
    expect(sink.received).toHaveLength(6);
    const events = sink.received.map((each) => new Webhook(secret).verify(each.body, each.headers) as { data: { after: unknown } });
    expect(events.map((event) => event.data.after)).toEqual([0, 1, 2, 3, 4, 5].map(rulesFor));
    expect(new Set(sink.received.map((each) => each.headers["webhook-id"])).size).toBe(6);
    // Every node holds the same outcome: six deliveries, each delivered at its first attempt.
    for (const node of nodes) {
      const listed = await eventually(
        () => admin(node, "GET", `${hooks()}/${created.body.webhook.id}/deliveries`),
        (reply) => reply.body.deliveries?.length === 6 && reply.body.deliveries.every((each: { state: string }) => each.state === "delivered"),
      );
      expect(listed.body.deliveries.map((each: { attempts: unknown[] }) => each.attempts.length)).toEqual([1, 1, 1, 1, 1, 1]);
    }
  });

  it("announces a feedback tracked through one node, with one webhook-id", { timeout: 60_000 }, async () => {
    const sink = await startReceiver();
    receivers.push(sink);
    const [a, b] = nodes as [TestServer, TestServer];
    const created = await admin(a, "POST", hooks(), { url: sink.url, events: ["feedback.created"] });
    expect((await admin(a, "PUT", `/admin/apps/${keys.app.id}/features/heard`, {})).status).toBe(200);
    await eventually(() => admin(b, "GET", `${hooks()}/${created.body.webhook.id}`), (reply) => reply.status === 200);
    await eventually(() => admin(b, "GET", `/admin/apps/${keys.app.id}/features`), (reply) => reply.body.features?.some((each: { key: string }) => each.key === "heard"));
    const sent = await request(b.url, "POST", "/feedback", { token: keys.production.publishableKey, body: { userId: "u1", key: "heard", score: 5 } });
    expect(sent.status).toBe(200);
    await sink.waitFor(1, 30_000);
    await sleep(2000);
    // At least once; every copy (in the usual case, the only one) has the same webhook-id.
    expect(new Set(sink.received.map((each) => each.headers["webhook-id"])).size).toBe(1);
    expect(new Webhook(created.body.secret).verify(sink.received[0]!.body, sink.received[0]!.headers)).toMatchObject({ type: "feedback.created", data: { after: { feedbackId: sent.body.feedbackId, score: 5 } } });
  });

  it("delivers through another node when the delivering node is killed, with the same webhook-id", { timeout: 90_000 }, async () => {
    const sink = await startReceiver();
    receivers.push(sink);
    sink.answer = () => "hang";
    const created = await admin(nodes[0]!, "POST", hooks(), { url: sink.url, events: ["feature.created"] });
    expect(created.status).toBe(200);
    expect((await admin(nodes[1]!, "PUT", `/admin/apps/${keys.app.id}/features/survivor`, {})).status).toBe(200);
    const [first] = await sink.waitFor(1, 30_000);
    // The lease names the node delivering; every node reads the same lease from the replicated log.
    const holder = (await eventually(() => admin(nodes[2]!, "GET", `${hooks()}/${created.body.webhook.id}`), (reply) => reply.body.webhook?.lease !== null)).body.webhook.lease.nodeId as string;
    const victim = nodes[["a", "b", "c"].indexOf(holder)]!;
    await victim.kill();
    const survivors = nodes.filter((node) => node !== victim);
    const seen = sink.received.length;
    sink.answer = () => ({ status: 200 });
    const [after] = (await sink.waitFor(seen + 1, 40_000)).slice(seen);
    expect(after!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(JSON.parse(after!.body)).toMatchObject({ type: "feature.created", data: { feature: { key: "survivor" } } });
    for (const node of survivors) {
      const listed = await eventually(
        () => admin(node, "GET", `${hooks()}/${created.body.webhook.id}/deliveries`),
        (reply) => reply.body.deliveries?.[0]?.state === "delivered",
      );
      expect(listed.body.deliveries).toHaveLength(1);
      const lease = (await admin(node, "GET", `${hooks()}/${created.body.webhook.id}`)).body.webhook.lease;
      expect(lease.nodeId).not.toBe(holder);
    }
  });
});
