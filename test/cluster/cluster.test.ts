import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import type { TestServer } from "../support/server.js";
import { openSse } from "../support/sse.js";
import { allEvents, clusterPrefix, eventually, startClusterNode, startNatsCluster, type NatsCluster } from "../support/cluster.js";

const PRO_RULES = { rules: [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }] };

describe("cluster mode on NATS JetStream", () => {
  let nats: NatsCluster;
  const prefix = clusterPrefix();
  let nodes: TestServer[];
  let keys: Awaited<ReturnType<typeof createApp>>;
  const admin = (node: TestServer, method: string, path: string, body?: unknown) => request(node.url, method, path, { token: node.adminToken, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    nats = await startNatsCluster();
    nodes = await Promise.all(["a", "b", "c"].map((nodeId) => startClusterNode({ nats, prefix, nodeId })));
    keys = await createApp(nodes[0]!.url, nodes[0]!.adminToken);
  }, 60_000);
  afterAll(async () => {
    if (process.env.CLUSTER_DEBUG) for (const node of nodes ?? []) console.log(node.output.filter((line) => !line.includes('"listening"')).join("\n"));
    await Promise.all((nodes ?? []).map((node) => node.kill()));
    await nats?.stop();
  });

  it("applies a change written through one node on every node, with the same versions, and answers after applying it locally", async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    // Read-your-writes: the app created through A is there on A at once.
    expect((await admin(a, "GET", `/admin/apps/${keys.app.id}`)).status).toBe(200);
    expect((await admin(b, "PUT", `/admin/apps/${keys.app.id}/features/huddle`, {})).status).toBe(200);
    const put = await admin(b, "PUT", `/admin/environments/${keys.production.id}/features/huddle/targeting`, PRO_RULES);
    expect(put.status).toBe(200);
    expect((await admin(b, "GET", `/admin/environments/${keys.production.id}/features/huddle`)).body.targeting.version).toBe(put.body.targeting.version);
    for (const node of [a, b, c]) {
      const seen = await eventually(
        () => admin(node, "GET", `/admin/environments/${keys.production.id}/features/huddle`),
        (reply) => reply.status === 200 && reply.body.targeting?.version === put.body.targeting.version,
      );
      expect(seen.body.flagStateVersion).toBe(put.body.flagStateVersion);
      expect(seen.body.targeting.rules).toEqual(PRO_RULES.rules);
    }
    const evaluated = await request(c.url, "GET", `/features/evaluated?publishableKey=${keys.production.publishableKey}&context.company.id=x&context.company.plan=pro`);
    expect(evaluated.body.features.huddle.isEnabled).toBe(true);
  });

  it("gives concurrent changes of one feature through two nodes consecutive versions, none lost", async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    await admin(a, "PUT", `/admin/apps/${keys.app.id}/features/race`, {});
    const writes = Array.from({ length: 12 }, (_, index) =>
      admin(index % 2 === 0 ? a : b, "PUT", `/admin/environments/${keys.production.id}/features/race/targeting`, { rules: [{ filter: { type: "context", field: "user.id", operator: "IS", values: [`u${index}`] } }] }),
    );
    const replies = await Promise.all(writes);
    for (const reply of replies) expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const versions = replies.map((reply) => reply.body.targeting.version as number).sort((x, y) => x - y);
    expect(versions).toEqual(Array.from({ length: 12 }, (_, index) => index + 1));
    const flagStates = new Set(replies.map((reply) => reply.body.flagStateVersion));
    expect(flagStates.size).toBe(12);
    for (const node of [a, b, c]) {
      const history = await eventually(
        () => admin(node, "GET", `/admin/environments/${keys.production.id}/features/race/history`),
        (reply) => reply.status === 200 && reply.body.versions.length === 12,
      );
      expect(history.body.versions.map((entry: { version: number }) => entry.version)).toEqual(versions);
    }
  });

  it("sends flags-updated to a stream held on another node when a change is applied there", async () => {
    const [a, , c] = nodes as [TestServer, TestServer, TestServer];
    const stream = await openSse(`${c.url}/sse/client?publishableKey=${keys.production.publishableKey}`);
    try {
      await stream.waitFor((connection) => connection.versions().length >= 1, 5_000);
      const before = stream.versions().at(-1)!;
      const put = await admin(a, "PUT", `/admin/environments/${keys.production.id}/features/huddle/targeting`, { rules: [] });
      expect(put.status).toBe(200);
      await stream.waitFor((connection) => connection.versions().includes(put.body.flagStateVersion), 5_000);
      expect(put.body.flagStateVersion).toBeGreaterThan(before);
    } finally {
      stream.close();
    }
  });

  it("answers tracking once replicated, and every node stores it: remote context works on every node", async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    const publishable = keys.production.publishableKey;
    await admin(a, "PUT", `/admin/environments/${keys.production.id}/features/huddle/targeting`, PRO_RULES);
    expect((await request(a.url, "POST", "/company", { token: publishable, body: { companyId: "initech", attributes: { plan: "pro" } } })).status).toBe(200);
    const feedback = await request(b.url, "POST", "/feedback", { token: publishable, body: { key: "huddle", userId: "u1", score: 5 } });
    expect(feedback.status).toBe(200);
    expect(feedback.body.feedbackId).toMatch(/^fb_/);
    for (const node of [a, b, c]) {
      await eventually(
        () => request(node.url, "GET", `/features/evaluated?publishableKey=${publishable}&context.company.id=initech`),
        (reply) => reply.body.features?.huddle?.isEnabled === true,
      );
      const stored = await eventually(
        () => admin(node, "GET", `/admin/environments/${keys.production.id}/feedback`),
        (reply) => reply.body.feedback?.length === 1,
      );
      // The id decided by B is the one every node stored.
      expect(stored.body.feedback[0].feedbackId).toBe(feedback.body.feedbackId);
    }
    expect((await request(c.url, "POST", "/event", { token: publishable, body: { userId: "u1" } })).status).toBe(400);
  });

  it("loses nothing acknowledged when a node is killed -9 during tracking load, and the node catches up on restart", async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    const environment = keys.development.id;
    const publishable = keys.development.publishableKey;
    const acknowledged: string[] = [];
    let stop = false;
    const load = async (node: TestServer, lane: string) => {
      for (let index = 0; !stop; index++) {
        const name = `${lane}-${index}`;
        try {
          const reply = await request(node.url, "POST", "/bulk", { token: publishable, body: [{ type: "event", event: name, userId: "load" }, { type: "user", userId: "load", attributes: { last: name } }] });
          if (reply.status === 200) acknowledged.push(name);
        } catch {
          return; // the node died under us: what it did not answer was not acknowledged
        }
      }
    };
    const lanes = [load(b, "b1"), load(b, "b2"), load(a, "a1")];
    await eventually(async () => acknowledged.length, (count) => count >= 60);
    await b.kill();
    await eventually(async () => acknowledged.length, (count) => count >= 120);
    stop = true;
    await Promise.all(lanes);
    expect(acknowledged.some((name) => name.startsWith("b"))).toBe(true);

    const restarted = await startClusterNode({ nats, prefix, nodeId: "b", dataDir: b.dataDir });
    nodes[1] = restarted;
    for (const node of [a, c, restarted]) {
      const events = await eventually(
        () => allEvents(node, environment),
        (list) => {
          const stored = new Set(list.map((event) => event.event));
          return acknowledged.every((name) => stored.has(name));
        },
        30_000,
      ).catch((error: Error) => {
        throw new Error(`node ${node === a ? "a" : node === c ? "c" : "b (restarted)"}: ${error.message.slice(0, 300)}`);
      });
      const names = events.map((event) => event.event);
      // Nothing stored twice, nothing partly stored: every stored bulk stored its event once.
      expect(new Set(names).size).toBe(names.length);
    }
    expect((await eventually(() => request(restarted.url, "GET", "/health"), (reply) => reply.status === 200)).body.cluster.caughtUp).toBe(true);
  }, 90_000);
});
