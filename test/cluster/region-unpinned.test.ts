/**
 * Data residency, the operator's opt-in (issue 19, docs/CLUSTER.md): a node of region `eu` started with
 * SWITCHYARD_REGION_SERVES_UNPINNED=true (D) serves the unpinned apps besides its region's, through the unregioned
 * streams, while a plain `eu` node (E) does not, and nothing of an `eu` app ever reaches the unregioned streams.
 * One real three-server NATS cluster; N is a node of no region.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { unpack } from "msgpackr";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, signIn, signInReply } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { CLI, type TestServer } from "../support/server.js";
import { allEvents, clusterPrefix, eventually, startClusterNode, startNatsCluster, type NatsCluster } from "../support/cluster.js";

const run = promisify(execFile);
const PRO_RULES = { rules: [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }] };
/**
 * A feature's history without its audit cursors: those number each node's own audit log, and D's holds its region's
 * entries besides the unpinned apps' ones (docs/CLUSTER.md).
 */
const versionsOf = (reply: { body: Record<string, any> }) => reply.body.versions.map(({ auditCursor: _cursor, ...version }: Record<string, unknown>) => version);
const userRules = (id: string) => ({ rules: [{ filter: { type: "context", field: "user.id", operator: "IS", values: [id] } }] });

describe("a region's node that also serves the unpinned apps (SWITCHYARD_REGION_SERVES_UNPINNED)", () => {
  let nats: NatsCluster;
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  const prefix = clusterPrefix();
  let n: TestServer;
  let e: TestServer;
  let d: TestServer;
  let unpinned: Awaited<ReturnType<typeof createApp>>;
  let pinned: Awaited<ReturnType<typeof createApp>>;
  const admin = (node: TestServer, method: string, path: string, body?: unknown) => request(node.url, method, path, { token: node.adminToken, ...(body !== undefined ? { body } : {}) });
  const evaluate = (node: TestServer, key: string, context = "context.company.id=x&context.company.plan=pro") => request(node.url, "GET", `/features/evaluated?publishableKey=${key}&${context}`);
  const startD = (dataDir?: string) => startClusterNode({ nats, prefix, nodeId: "d", ...(dataDir ? { dataDir } : {}), env: { ...ACCOUNT_TEST_ENV, SWITCHYARD_REGION: "eu", SWITCHYARD_REGION_SERVES_UNPINNED: "true" } });
  /** Messages in a stream of this file's prefix (`CONFIG`, `eu_TRACKING`…). */
  const count = async (stream: string) => (await jsm.streams.info(`${prefix}_${stream}`)).state.messages;
  /** Every message body of a stream, as bytes. */
  const bodies = async (stream: string) => {
    const info = await jsm.streams.info(`${prefix}_${stream}`);
    const all: Buffer[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) all.push(Buffer.from((await jsm.streams.getMessage(`${prefix}_${stream}`, { seq })).data));
    return all;
  };

  beforeAll(async () => {
    nats = await startNatsCluster();
    [n, e, d] = await Promise.all([
      startClusterNode({ nats, prefix, nodeId: "n", env: ACCOUNT_TEST_ENV }),
      startClusterNode({ nats, prefix, nodeId: "e", env: { ...ACCOUNT_TEST_ENV, SWITCHYARD_REGION: "eu" } }),
      startD(),
    ]);
    for (const node of [n, e, d]) await eventually(() => request(node.url, "GET", "/health"), (reply) => reply.status === 200);
    nc = await connect({ servers: nats.urls.split(",") });
    jsm = await jetstreamManager(nc);
    // An unpinned app is created through a node of no region; a node of a region pins what it creates.
    unpinned = await createApp(n.url, n.adminToken, "Anywhere");
    expect((unpinned.app as { region?: string }).region).toBeUndefined();
    expect((await admin(n, "PUT", `/admin/apps/${unpinned.app.id}/features/huddle`, {})).status).toBe(200);
    expect((await admin(n, "PUT", `/admin/environments/${unpinned.production.id}/features/huddle/targeting`, PRO_RULES)).status).toBe(200);
    pinned = await createApp(d.url, d.adminToken, "EU app");
    expect((pinned.app as { region?: string }).region).toBe("eu");
  }, 150_000);

  afterAll(async () => {
    if (process.env.CLUSTER_DEBUG) for (const node of [n, e, d]) console.log(node?.output.join("\n"));
    await Promise.all([n, e, d].map((node) => node?.kill()));
    await nc?.close();
    await nats?.stop();
  }, 60_000);

  it("serves an unpinned app created through a node of no region, with the same answers; a plain node of the region does not", async () => {
    const reference = await evaluate(n, unpinned.production.publishableKey);
    expect(reference.body.features.huddle.isEnabled).toBe(true);
    const served = await eventually(() => evaluate(d, unpinned.production.publishableKey), (reply) => reply.status === 200 && reply.body.features?.huddle?.targetingVersion === reference.body.features.huddle.targetingVersion);
    expect(served.body).toEqual(reference.body);
    const apps = await admin(d, "GET", "/admin/apps");
    expect(apps.body.apps.map((app: { id: string; region?: string }) => [app.id, app.region]).sort()).toEqual([[unpinned.app.id, undefined], [pinned.app.id, "eu"]].sort());

    // E applies the region's streams only: the unpinned app is unknown there, the region's app is not.
    await eventually(() => admin(e, "GET", `/admin/apps/${pinned.app.id}`), (reply) => reply.status === 200);
    expect((await admin(e, "GET", `/admin/apps/${unpinned.app.id}`)).status).toBe(404);
    const refused = await evaluate(e, unpinned.production.publishableKey);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    // N never hears of the region's app.
    expect((await admin(n, "GET", `/admin/apps/${pinned.app.id}`)).status).toBe(404);
  }, 60_000);

  it("sends its changes of the unpinned app to the unregioned streams: nodes of no region apply them, with consecutive versions", async () => {
    const path = `/admin/environments/${unpinned.production.id}/features/huddle`;
    const before = { config: await count("CONFIG"), euConfig: await count("eu_CONFIG") };
    const throughD = await admin(d, "PUT", `${path}/targeting`, userRules("u1"));
    expect(throughD.status, JSON.stringify(throughD.body)).toBe(200);
    // Read-your-writes on D: it answered once it applied the change from the unregioned stream.
    expect((await admin(d, "GET", path)).body.targeting.version).toBe(throughD.body.targeting.version);
    const onN = await eventually(() => admin(n, "GET", path), (reply) => reply.body.targeting?.version === throughD.body.targeting.version);
    expect(onN.body.targeting.rules).toEqual(userRules("u1").rules);
    expect(onN.body.flagStateVersion).toBe(throughD.body.flagStateVersion);
    // Optimistic concurrency on the unregioned stream: changes through N and D take the next versions, none lost.
    const throughN = await admin(n, "PUT", `${path}/targeting`, userRules("u2"));
    expect(throughN.body.targeting.version).toBe(throughD.body.targeting.version + 1);
    const again = await admin(d, "PUT", `${path}/targeting`, userRules("u3"));
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.targeting.version).toBe(throughD.body.targeting.version + 2);
    const [historyN, historyD] = await Promise.all([
      eventually(() => admin(n, "GET", `${path}/history`), (reply) => reply.body.versions?.length === again.body.targeting.version),
      admin(d, "GET", `${path}/history`),
    ]);
    expect(versionsOf(historyD)).toEqual(versionsOf(historyN));
    expect(await count("CONFIG")).toBe(before.config + 3);
    expect(await count("eu_CONFIG")).toBe(before.euConfig);
    // E never receives the unpinned app's changes.
    expect((await admin(e, "GET", path)).status).toBe(404);
  }, 60_000);

  it("stores an unpinned app's tracking sent to it on the nodes of no region, and a region's app's on the region's nodes only", async () => {
    const before = { tracking: await count("TRACKING"), euTracking: await count("eu_TRACKING") };
    const anywhere = unpinned.production.publishableKey;
    expect((await request(d.url, "POST", "/company", { token: anywhere, body: { companyId: "initech", attributes: { plan: "pro" } } })).status).toBe(200);
    expect((await request(d.url, "POST", "/event", { token: anywhere, body: { event: "anywhere-event", userId: "u-any" } })).status).toBe(200);
    expect((await request(d.url, "POST", "/event", { token: pinned.production.publishableKey, body: { event: "eu-event", userId: "u-eu" } })).status).toBe(200);
    // Read-your-writes per stream set: a feedback created through D and updated through D at once is found there
    // (the update waits for D's applier of the unregioned tracking stream), and N stores both.
    const created = await request(d.url, "POST", "/feedback", { token: anywhere, body: { key: "huddle", userId: "u-any", score: 4 } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const updated = await request(d.url, "POST", "/feedback", { token: anywhere, body: { key: "huddle", userId: "u-any", feedbackId: created.body.feedbackId, comment: "from the EU node" } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const stored = await eventually(() => admin(n, "GET", `/admin/environments/${unpinned.production.id}/feedback`), (reply) => reply.body.feedback?.[0]?.comment === "from the EU node");
    expect(stored.body.feedback).toEqual([expect.objectContaining({ feedbackId: created.body.feedbackId, score: 4, comment: "from the EU node" })]);

    // Remote context on N: the company's attributes stored from D's call decide N's answer.
    await admin(n, "PUT", `/admin/environments/${unpinned.production.id}/features/huddle/targeting`, PRO_RULES);
    await eventually(() => evaluate(n, anywhere, "context.company.id=initech"), (reply) => reply.body.features?.huddle?.isEnabled === true);
    const [eventsN, eventsD] = await Promise.all([
      eventually(() => allEvents(n, unpinned.production.id), (events) => events.some((event) => event.event === "anywhere-event")),
      eventually(() => allEvents(d, unpinned.production.id), (events) => events.some((event) => event.event === "anywhere-event")),
    ]);
    expect(eventsD).toEqual(eventsN);
    // The region's app's event: on E (and D), never on N, and not in the unregioned tracking stream.
    for (const node of [e, d]) await eventually(() => allEvents(node, pinned.production.id), (events) => events.some((event) => event.event === "eu-event"));
    expect((await admin(n, "GET", `/admin/environments/${pinned.production.id}/events`)).status).toBe(404);
    expect(await count("TRACKING")).toBe(before.tracking + 4);
    expect(await count("eu_TRACKING")).toBe(before.euTracking + 1);
    // Nothing of the region's app in any unregioned stream: no message names its id or its environments'.
    const identifiers = [pinned.app.id, pinned.production.id, pinned.development.id];
    for (const stream of ["CONFIG", "TRACKING"]) {
      const messages = await bodies(stream);
      expect(messages.length).toBeGreaterThan(0);
      for (const body of messages) for (const id of identifiers) expect(body.includes(id)).toBe(false);
    }
  }, 60_000);

  it("keeps its region's accounts: none from the unregioned streams, and a member of the region manages the unpinned apps through it", async () => {
    await createMember(n.url, n.adminToken, "anywhere@example.com", "editor");
    const regional = await createMember(d.url, d.adminToken, "eu-editor@example.com", "editor");
    // Once D applied the unregioned stream past N's member, that member is still unknown on D.
    const configEnd = await count("CONFIG");
    await eventually(() => request(d.url, "GET", "/health"), (reply) => reply.body.cluster?.unpinned?.config.applied >= configEnd);
    const emails = async (node: TestServer) => (await admin(node, "GET", "/admin/members")).body.members.map((member: { email: string }) => member.email).sort();
    expect(await emails(d)).toEqual(["eu-editor@example.com"]);
    await eventually(() => emails(e), (list) => list.includes("eu-editor@example.com"));
    expect(await emails(e)).toEqual(["eu-editor@example.com"]);
    expect(await emails(n)).toEqual(["anywhere@example.com"]);
    expect((await signInReply(d.url, "anywhere@example.com", "correct horse battery staple")).status).toBe(401);
    expect((await signInReply(n.url, "eu-editor@example.com", "correct horse battery staple")).status).toBe(401);

    // The region's editor changes the unpinned app through D: the change reaches N, naming its author as any change
    // does (the documented consequence: the author's id and email travel with it).
    const session = await signIn(d.url, "eu-editor@example.com");
    const path = `/admin/environments/${unpinned.production.id}/features/huddle`;
    const put = await asSession(d.url, session, "PUT", `${path}/targeting`, PRO_RULES);
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const history = await eventually(() => admin(n, "GET", `${path}/history`), (reply) => reply.body.versions?.some((version: { version: number }) => version.version === put.body.targeting.version));
    const version = history.body.versions.find((entry: { version: number }) => entry.version === put.body.targeting.version);
    expect(version.actor).toMatchObject({ kind: "member", id: regional.id, email: "eu-editor@example.com" });
    // Its member record and its session stay in the region's streams: the unregioned messages naming its email are
    // N's own record of the sign-in attempted there above, and that change.
    const mentions = (await bodies("CONFIG")).map((body) => unpack(body) as { type: string }).filter((change) => JSON.stringify(change).includes("eu-editor@example.com"));
    expect(mentions.map((change) => change.type)).toEqual(["sign-in.fail", "rules.put"]);
    expect(mentions[1]).toMatchObject({ environmentId: unpinned.production.id });
  }, 60_000);

  it("shows both stream sets in /health and cluster status, and registers in both registries", async () => {
    const health = await eventually(() => request(d.url, "GET", "/health"), (reply) => reply.status === 200 && reply.body.cluster.unpinned?.config.lag === 0 && reply.body.cluster.unpinned.tracking.lag === 0);
    expect(health.body.cluster).toMatchObject({ nodeId: "d", region: "eu", connected: true, caughtUp: true, unpinned: { caughtUp: true, tracking: { lag: 0 } } });
    // The primary fields are the region's streams: what D applied of them, as E reports for the same streams.
    const fromE = (await request(e.url, "GET", "/health")).body.cluster;
    expect(fromE.unpinned).toBeUndefined();
    // `config.last` is the end of the region's configuration stream, `unpinned.config.last` the unregioned one's.
    await eventually(
      async () => {
        const cluster = (await request(d.url, "GET", "/health")).body.cluster;
        return [cluster.config.last, cluster.unpinned.config.last, await count("eu_CONFIG"), await count("CONFIG")];
      },
      ([region, unregioned, regionEnd, unregionedEnd]) => region === regionEnd && unregioned === unregionedEnd,
    );

    const json = JSON.parse((await run(process.execPath, [CLI, "cluster", "status", "--json", "--url", d.url, "--token", d.adminToken])).stdout);
    expect(json.cluster.nodes.map((node: { nodeId: string }) => node.nodeId)).toEqual(["d", "e"]);
    expect(json.cluster.unpinned.nodes.map((node: { nodeId: string; region?: string }) => [node.nodeId, node.region])).toEqual([
      ["d", "eu"],
      ["n", undefined],
    ]);
    expect(json.cluster.unpinned.streams.config).toBe(await count("CONFIG"));
    // In the unregioned registry D reports its positions in the unregioned streams.
    expect(json.cluster.unpinned.nodes[0].config.applied).toBe(health.body.cluster.unpinned.config.applied);
    const text = (await run(process.execPath, [CLI, "cluster", "status", "--url", d.url, "--token", d.adminToken])).stdout;
    expect(text).toContain("unregioned streams (unpinned apps):");
    expect(text.split("\n").filter((line) => line.startsWith("d (eu)\t"))).toHaveLength(2);
    // A node of no region lists D among the nodes of its streams; a plain region node has no second set.
    const fromN = (await admin(n, "GET", "/admin/cluster")).body.cluster;
    expect(fromN.nodes.map((node: { nodeId: string; region?: string }) => [node.nodeId, node.region])).toEqual([
      ["d", "eu"],
      ["n", undefined],
    ]);
    expect((await admin(e, "GET", "/admin/cluster")).body.cluster.unpinned).toBeUndefined();
  }, 60_000);

  it("resumes after a restart from the positions it stored, applying nothing twice; a plain region node refuses its data dir", async () => {
    const before = (await eventually(() => request(d.url, "GET", "/health"), (reply) => reply.status === 200 && [reply.body.cluster.config, reply.body.cluster.tracking, reply.body.cluster.unpinned.config, reply.body.cluster.unpinned.tracking].every((position) => position.lag === 0))).body.cluster;
    const eventsBefore = await allEvents(d, unpinned.production.id);
    await d.stop();

    // Without SWITCHYARD_REGION_SERVES_UNPINNED, the unpinned app in the data dir is refused at start.
    const refused = await run(process.execPath, [CLI, "serve"], {
      timeout: 20_000,
      env: { ...process.env, SWITCHYARD_DATA_DIR: d.dataDir, SWITCHYARD_PORT: "0", SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_ADMIN_TOKEN: d.adminToken, SWITCHYARD_CLUSTER_URL: nats.urls, SWITCHYARD_NODE_ID: "d", SWITCHYARD_CLUSTER_PREFIX: prefix, SWITCHYARD_REGION: "eu" },
    }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`the data dir holds app ${unpinned.app.id}, which is not pinned to a region, and this node is in region eu (SWITCHYARD_REGION) and does not serve unpinned apps (SWITCHYARD_REGION_SERVES_UNPINNED)`);

    // Changes and tracking made while D is down reach it on restart; what it had applied is not applied again.
    const path = `/admin/environments/${unpinned.production.id}/features/huddle`;
    const meanwhile = await admin(n, "PUT", `${path}/targeting`, userRules("u4"));
    expect((await request(n.url, "POST", "/event", { token: unpinned.production.publishableKey, body: { event: "while-down", userId: "u-any" } })).status).toBe(200);
    d = await startD(d.dataDir);
    const after = (await eventually(() => request(d.url, "GET", "/health"), (reply) => reply.status === 200)).body.cluster;
    expect(after.unpinned.config.applied).toBe(before.unpinned.config.applied + 1);
    expect(after.unpinned.tracking.applied).toBe(before.unpinned.tracking.applied + 1);
    expect(after.config.applied).toBe(before.config.applied);
    expect((await admin(d, "GET", path)).body.targeting.version).toBe(meanwhile.body.targeting.version);
    const eventsAfter = await allEvents(d, unpinned.production.id);
    expect(eventsAfter).toEqual(await allEvents(n, unpinned.production.id));
    expect(eventsAfter.length).toBe(eventsBefore.length + 1);
    const [historyN, historyD] = await Promise.all([admin(n, "GET", `${path}/history`), admin(d, "GET", `${path}/history`)]);
    expect(versionsOf(historyD)).toEqual(versionsOf(historyN));
    // It serves both kinds of app again.
    expect((await evaluate(d, unpinned.production.publishableKey, "context.user.id=u4")).body.features.huddle.isEnabled).toBe(true);
    expect((await evaluate(d, pinned.production.publishableKey)).status).toBe(200);
  }, 60_000);
});
