import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { flattenJSON } from "@bucketco/flag-evaluation";
import fc from "fast-check";
import type { FeatureDefinition } from "../../src/evaluation/index.js";
import { featureDefinitions, stringAtom } from "../parity/arbitraries.js";
import { evaluateWithReference } from "../parity/reference.js";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createApp, request } from "../support/http.js";
import { CLI, type TestServer } from "../support/server.js";
import { openSse } from "../support/sse.js";
import { allEvents, clientCredentials, clusterPrefix, eventually, startClusterNode, startNatsCluster, waitStreamsCurrent, type NatsCluster } from "../support/cluster.js";
import { differingSequences, readStreamCopies } from "../../bench/support/stream-copies.js";

const PRO_RULES = { rules: [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }] };

describe("cluster mode on NATS JetStream", () => {
  let nats: NatsCluster;
  const prefix = clusterPrefix();
  let nodes: TestServer[];
  let keys: Awaited<ReturnType<typeof createApp>>;
  const admin = (node: TestServer, method: string, path: string, body?: unknown) => request(node.url, method, path, { token: node.adminToken, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    // The servers speak TLS (a throwaway CA) and require a user and password: every node connects with
    // SWITCHYARD_CLUSTER_TLS_CA and SWITCHYARD_CLUSTER_USER/_PASSWORD.
    nats = await startNatsCluster({ auth: { user: "switchyard", password: "s3cret-for-tests" }, tls: true });
    nodes = await Promise.all(["a", "b", "c"].map((nodeId) => startClusterNode({ nats, prefix, nodeId })));
    keys = await createApp(nodes[0]!.url, nodes[0]!.adminToken);
  }, 150_000);
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

  it("pins apps created through a node of a region to it: their configuration and tracking reach that region's streams only, no other node serves them, and it serves no unpinned app", async () => {
    const [a] = nodes as [TestServer, TestServer, TestServer];
    const nc = await connect({ servers: nats.urls.split(","), ...clientCredentials(nats) });
    const jsm = await jetstreamManager(nc);
    const counts = async () =>
      Object.fromEntries(
        await Promise.all(["CONFIG", "TRACKING", "eu_CONFIG", "eu_TRACKING"].map(async (name) => [name, (await jsm.streams.info(`${prefix}_${name}`).catch(() => undefined))?.state.messages ?? 0] as const)),
      );
    const eu = await startClusterNode({ nats, prefix, nodeId: "eu1", env: { SWITCHYARD_REGION: "eu" } });
    let euAppId = "";
    try {
      await eventually(() => request(eu.url, "GET", "/health"), (reply) => reply.status === 200);
      const before = await counts();
      const euKeys = await createApp(eu.url, eu.adminToken, "EU app");
      euAppId = euKeys.app.id;
      expect((euKeys.app as { region?: string }).region).toBe("eu");
      expect((await admin(eu, "PUT", `/admin/apps/${euKeys.app.id}/features/huddle`, {})).status).toBe(200);
      expect((await admin(eu, "PUT", `/admin/environments/${euKeys.production.id}/features/huddle/targeting`, PRO_RULES)).status).toBe(200);
      expect((await request(eu.url, "POST", "/event", { token: euKeys.production.publishableKey, body: { event: "eu-only", userId: "eu-user" } })).status).toBe(200);
      const after = await counts();
      // The global streams got nothing; the region's got the app, its feature, its targeting and the event.
      expect([after.CONFIG, after.TRACKING]).toEqual([before.CONFIG, before.TRACKING]);
      expect(after.eu_CONFIG! - before.eu_CONFIG!).toBeGreaterThanOrEqual(3);
      expect(after.eu_TRACKING! - before.eu_TRACKING!).toBe(1);

      const evaluate = (node: TestServer, key: string) => request(node.url, "GET", `/features/evaluated?publishableKey=${key}&context.company.id=x&context.company.plan=pro`);
      expect((await evaluate(eu, euKeys.production.publishableKey)).body.features.huddle.isEnabled).toBe(true);
      const listed = await admin(eu, "GET", "/admin/apps");
      expect(listed.body.apps.map((app: { id: string; region?: string }) => [app.id, app.region])).toEqual([[euKeys.app.id, "eu"]]);
      // The rest of the cluster never heard of the EU app; the EU node serves none of theirs.
      expect((await admin(a, "GET", `/admin/apps/${euKeys.app.id}`)).status).toBe(404);
      const elsewhere = await evaluate(a, euKeys.production.publishableKey);
      const unpinned = await evaluate(eu, keys.production.publishableKey);
      expect(elsewhere.status).toBeGreaterThanOrEqual(400);
      expect(unpinned.status).toBe(elsewhere.status);
      expect((await admin(a, "GET", "/admin/apps")).body.apps.some((app: { id: string }) => app.id === euKeys.app.id)).toBe(false);
    } finally {
      await eu.kill();
      await nc.close();
    }
    // Its data dir, reused by a node of no region, is refused at start rather than served.
    const refused = await promisify(execFile)(process.execPath, [CLI, "serve"], {
      timeout: 20_000,
      env: { ...process.env, SWITCHYARD_DATA_DIR: eu.dataDir, SWITCHYARD_PORT: "0", SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_ADMIN_TOKEN: eu.adminToken },
    }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    rmSync(eu.dataDir, { recursive: true, force: true });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`SWITCHYARD_REGION: the data dir holds app ${euAppId}, which is pinned to region eu, and this node has no SWITCHYARD_REGION`);
  }, 60_000);

  it("replicates end users' opt-in choices and /features/enabled events, so versions and event logs stay equal on every node", async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    const publishable = keys.production.publishableKey;
    expect((await admin(a, "PUT", `/admin/apps/${keys.app.id}/features/labs`, { optInEnabled: true })).status).toBe(200);
    const optIn = await request(b.url, "POST", "/flags/opt-in", { token: publishable, body: { key: "labs", scope: "user", optedIn: true, context: { user: { id: "u9" } } } });
    expect(optIn.status, JSON.stringify(optIn.body)).toBe(200);
    for (const node of [a, b, c]) {
      const seen = await eventually(
        () => request(node.url, "GET", `/features/evaluated?publishableKey=${publishable}&context.user.id=u9`),
        (reply) => reply.body.features?.labs?.isEnabled === true,
      );
      expect(seen.body.features.labs.optIn.userOptedIn).toBe(true);
    }
    const versions = await Promise.all([a, b, c].map((node) => admin(node, "GET", `/admin/environments/${keys.production.id}/features/labs`)));
    expect(new Set(versions.map((reply) => reply.body.flagStateVersion))).toEqual(new Set([optIn.body.flagStateVersion]));
    // The same user's next choices, through other nodes: each one a new version (none taken for a retry of another).
    const optOut = await request(c.url, "POST", "/flags/opt-in", { token: publishable, body: { key: "labs", scope: "user", optedIn: false, context: { user: { id: "u9" } } } });
    expect(optOut.body.flagStateVersion).toBe(optIn.body.flagStateVersion + 1);
    const optInAgain = await request(a.url, "POST", "/flags/opt-in", { token: publishable, body: { key: "labs", scope: "user", optedIn: true, context: { user: { id: "u9" } } } });
    expect(optInAgain.body.flagStateVersion).toBe(optIn.body.flagStateVersion + 2);

    // C serves the last choice (made through A) once it applied it; each call records its evaluate events.
    const enabled = await eventually(
      () => request(c.url, "GET", `/features/enabled?publishableKey=${publishable}&context.user.id=u9`),
      (reply) => reply.status === 200 && reply.body.features?.labs?.isEnabled === true,
    );
    expect(enabled.body.features.labs.isEnabled).toBe(true);
    const logs = await Promise.all(
      [a, b, c].map((node) =>
        eventually(
          () => admin(node, "GET", `/admin/environments/${keys.production.id}/feature-events?limit=1000`),
          (reply) => reply.body.featureEvents?.some((event: { key: string; action: string }) => event.key === "labs" && event.action === "evaluate"),
        ),
      ),
    );
    expect(logs[1]!.body).toEqual(logs[0]!.body);
    expect(logs[2]!.body).toEqual(logs[0]!.body);
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
    // OFREP on a node: the same remote context, and its `check` event replicated to every node.
    const flag = await request(c.url, "POST", "/ofrep/v1/evaluate/flags/huddle", { token: publishable, body: { context: { targetingKey: "ofrep-u", companyId: "initech" } } });
    expect(flag.body).toMatchObject({ key: "huddle", value: true, reason: "TARGETING_MATCH" });
    for (const node of [a, b, c]) {
      await eventually(
        () => admin(node, "GET", `/admin/environments/${keys.production.id}/feature-events?limit=1000`),
        (reply) => reply.body.featureEvents?.some((event: { key: string; action: string }) => event.key === "huddle" && event.action === "check"),
      );
    }
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

  it("brings a fourth node that starts empty up to date: it answers like the others, and cluster status shows every node's lag", async () => {
    const [a] = nodes as [TestServer, TestServer, TestServer];
    const d = await startClusterNode({ nats, prefix, nodeId: "d" });
    nodes.push(d);
    const health = await eventually(() => request(d.url, "GET", "/health"), (reply) => reply.status === 200);
    expect(health.body.cluster).toMatchObject({ nodeId: "d", connected: true, caughtUp: true });
    for (const context of ["context.company.id=initech", "context.company.id=x&context.company.plan=pro", "context.user.id=u3", "context.user.id=u7&context.company.id=y"]) {
      const path = `/features/evaluated?publishableKey=${keys.production.publishableKey}&${context}`;
      const [reference, fresh] = await Promise.all([request(a.url, "GET", path), request(d.url, "GET", path)]);
      expect(fresh.body).toEqual(reference.body);
    }
    const [referenceEvents, freshEvents] = await Promise.all([allEvents(a, keys.development.id), allEvents(d, keys.development.id)]);
    expect(freshEvents).toEqual(referenceEvents);
    const [referenceHistory, freshHistory] = await Promise.all([
      admin(a, "GET", `/admin/environments/${keys.production.id}/features/race/history`),
      admin(d, "GET", `/admin/environments/${keys.production.id}/features/race/history`),
    ]);
    expect(freshHistory.body).toEqual(referenceHistory.body);

    const { stdout } = await promisify(execFile)(process.execPath, [CLI, "cluster", "status", "--url", d.url, "--token", d.adminToken]);
    const lines = stdout.trim().split("\n");
    expect(lines[0]!.split("\t")).toEqual(["node", "connected", "caught up", "config", "config lag", "tracking", "tracking lag", "diverged", "reported"]);
    expect(lines.slice(1).map((line) => line.split("\t")[0])).toEqual(["a", "b", "c", "d"]);
    // No node read a copy of either stream that broke JetStream's promises (copy-check.ts), and the servers' own
    // copies of the tracking stream agree message by message (what the NATS-server kill test reads when a node misses
    // something).
    expect(lines.slice(1).map((line) => line.split("\t")[7])).toEqual(["0", "0", "0", "0"]);
    const json = JSON.parse((await promisify(execFile)(process.execPath, [CLI, "cluster", "status", "--json", "--url", d.url, "--token", d.adminToken])).stdout);
    const own = json.cluster.nodes.find((node: { nodeId: string }) => node.nodeId === "d");
    expect(own).toMatchObject({ connected: true, caughtUp: true, config: { lag: 0 } });
    const copies = await readStreamCopies(nats, `${prefix}_TRACKING`);
    expect(copies.map((copy) => copy.ids.length)).toEqual(nats.servers.map(() => json.cluster.streams.tracking));
    expect(copies.every((copy) => copy.ids.every((id) => id !== "-"))).toBe(true);
    expect(differingSequences(copies)).toEqual([]);

    const metrics = await fetch(`${d.url}/metrics`, { headers: { authorization: `Bearer ${d.adminToken}` } }).then((response) => response.text());
    expect(metrics).toMatch(/^switchyard_cluster_lag_messages\{log="tracking"\} \d+$/m);
    expect(metrics).toMatch(/^switchyard_cluster_connected 1$/m);
    expect(metrics).toMatch(/^switchyard_cluster_stream_divergences 0$/m);
  }, 60_000);

  // Runs after the tests that compare whole event logs across nodes: nats-server 2.9.10 can leave the servers' copies
  // of the stream different after this kill (docs/CLUSTER.md), and then nodes reading different copies differ too.
  it("loses nothing acknowledged when a NATS server is killed -9 during tracking load", async (context) => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    const publishable = keys.development.publishableKey;
    const acknowledged: string[] = [];
    let stop = false;
    const load = async (node: TestServer, lane: string) => {
      for (let index = 0; !stop; index++) {
        const name = `nats-${lane}-${index}`;
        const reply = await request(node.url, "POST", "/event", { token: publishable, body: { event: name, userId: "nats" }, retry: false });
        if (reply.status === 200) acknowledged.push(name);
        else {
          // Not acknowledged: a retryable 503, never a 500.
          expect(reply.status).toBe(503);
          expect(reply.body.error.code).toBe("CLUSTER_UNAVAILABLE");
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    };
    const lanes = [load(a, "a"), load(b, "b"), load(c, "c")];
    await eventually(async () => acknowledged.length, (count) => count >= 60);
    const victim = nats.servers[0]!;
    await victim.kill();
    const afterKill = acknowledged.length;
    await eventually(async () => acknowledged.length, (count) => count >= afterKill + 60, 30_000);
    stop = true;
    await Promise.all(lanes);
    await victim.start();
    // Settled before anything else is checked or changed (the tests after this one publish changes at once).
    await waitStreamsCurrent(nats, prefix);
    for (const node of [a, b, c]) {
      const events = await eventually(
        () => allEvents(node, keys.development.id),
        (list) => {
          const stored = new Set(list.map((event) => event.event));
          return acknowledged.every((name) => stored.has(name));
        },
        30_000,
      ).catch(async (error: Error) => {
        const stored = new Set((await allEvents(node, keys.development.id)).map((event) => event.event));
        const missing = acknowledged.filter((name) => !stored.has(name));
        const status = await admin(node, "GET", "/admin/cluster");
        // The servers' own copies of the stream: when they differ, JetStream broke its promise, not the node.
        const differing = differingSequences(await readStreamCopies(nats, `${prefix}_TRACKING`));
        if (differing.length > 0) {
          const reason = `the NATS servers' copies of the tracking stream differ after the kill -9 (a fault of nats-server 2.9.10, docs/CLUSTER.md): ${differing.slice(0, 5).map((entry) => `seq ${entry.sequence}: ${entry.held}`).join("; ")}; node ${node.url} misses ${missing.length} acknowledged (${missing.slice(0, 5).join(",")}); nodes' divergence counts ${JSON.stringify(status.body.cluster?.nodes?.map((entry: { nodeId: string; tracking: { divergences?: number } }) => [entry.nodeId, entry.tracking.divergences]))}`;
          console.warn(`SKIPPED: ${reason}`);
          context.skip(reason);
        }
        throw new Error(`node ${node.url}: ${missing.length} of ${acknowledged.length} missing (${missing.slice(0, 10).join(",")}); status ${JSON.stringify(status.body)}; log ${node.output.filter((line) => line.includes("failed to apply") || line.includes("interrupted")).slice(0, 3).join("\n")} ${error.message.slice(0, 100)}`);
      });
      const names = events.map((event) => event.event).filter((name) => name.startsWith("nats-"));
      expect(new Set(names).size).toBe(names.length);
    }
  }, 90_000);

  it("evaluates like the reference on every node for random rulesets written through random nodes", async () => {
    const parity = await createApp(nodes[0]!.url, nodes[0]!.adminToken, "Parity");
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    // The app was created through A: every node has it once it applied that change.
    for (const node of [a, b, c]) await eventually(() => admin(node, "GET", `/admin/apps/${parity.app.id}`), (reply) => reply.status === 200);
    const attribute = fc.constantFrom("id", "name", "plan", "seats", "tags");
    const value = fc.oneof(stringAtom.filter((text) => text.isWellFormed()), fc.integer({ min: -1000, max: 1000 }), fc.boolean());
    const entity = fc.dictionary(attribute, value, { maxKeys: 3 });
    const context = fc.record({ user: entity, company: entity, other: entity }, { requiredKeys: [] });
    const samples = fc.sample(fc.tuple(featureDefinitions(), fc.array(context, { minLength: 5, maxLength: 5 }), fc.nat()), { numRuns: 8, seed: 20261125 });
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    let compared = 0;
    try {
      for (const [definitions, contexts, pick] of samples) {
        const writer = [a, b, c][pick % 3]!;
        for (const feature of (await admin(writer, "GET", `/admin/apps/${parity.app.id}/features`)).body.features as { key: string }[]) {
          await admin(writer, "DELETE", `/admin/apps/${parity.app.id}/features/${encodeURIComponent(feature.key)}`);
        }
        let stored = true;
        for (const definition of definitions) {
          const path = encodeURIComponent(definition.key);
          await admin(writer, "PUT", `/admin/apps/${parity.app.id}/features/${path}`, { stage: definition.stage });
          const targeting = await admin(writer, "PUT", `/admin/environments/${parity.production.id}/features/${path}/targeting`, { rules: definition.targeting.rules });
          const config = await admin(writer, "PUT", `/admin/environments/${parity.production.id}/features/${path}/config`, { variants: definition.config.variants });
          if (targeting.status !== 200 || config.status !== 200) stored = false;
        }
        if (!stored) continue;
        const rules = await request<{ features: FeatureDefinition[] }>(writer.url, "GET", "/features", { token: parity.production.secretKey });
        for (const node of [a, b, c]) {
          // Each node serves the same rules once it applied the writer's changes.
          await eventually(
            () => request<{ features: FeatureDefinition[] }>(node.url, "GET", "/features", { token: parity.production.secretKey }),
            (reply) => JSON.stringify(reply.body.features) === JSON.stringify(rules.body.features),
          );
          for (const sample of contexts) {
            const flat = flattenJSON({ context: sample });
            const query = Object.keys(flat).sort().map((name) => `${encodeURIComponent(name)}=${encodeURIComponent(flat[name]!)}`).join("&");
            const answer = await request(node.url, "GET", `/features/evaluated?${query}`, { token: parity.production.publishableKey });
            const expected = Object.fromEntries(evaluateWithReference(rules.body.features, sample).map((item) => [item.key, JSON.parse(JSON.stringify(item))]));
            expect(answer.body.features, `node ${node.url} context ${JSON.stringify(sample)}`).toEqual(expected);
            compared++;
          }
        }
      }
    } finally {
      quiet.mockRestore();
    }
    // Most generated rulesets are storable (the rest are refused on save, as alone): at least half were compared.
    console.log(`FIGURES cluster-parity ${JSON.stringify({ compared })}`);
    expect(compared).toBeGreaterThanOrEqual((samples.length / 2) * 5 * 3);
  }, 90_000);

  it("refuses a tracking request larger than NATS's max_payload with a 413 naming the setting, and stores nothing of it", async () => {
    const [a, b] = nodes as [TestServer, TestServer, TestServer];
    // Under the 2 MiB bulk limit, over the test servers' default 1 MiB max_payload once encoded.
    const items = Array.from({ length: 9_000 }, (_, index) => ({ type: "event", event: `big-${index}`, userId: "big", attributes: { padding: "x".repeat(120) } }));
    const reply = await request(a.url, "POST", "/bulk", { token: keys.development.publishableKey, body: items });
    expect(reply.status).toBe(413);
    expect(reply.body.error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(reply.body.error.message).toContain("max_payload");
    const small = await request(a.url, "POST", "/event", { token: keys.development.publishableKey, body: { event: "after-big", userId: "big" } });
    expect(small.status).toBe(200);
    const events = await eventually(() => allEvents(b, keys.development.id), (list) => list.some((event) => event.event === "after-big"));
    expect(events.some((event) => event.event.startsWith("big-"))).toBe(false);
  });

  it("keeps a node with wrong NATS credentials out of the cluster, unhealthy, and never logs the password", async () => {
    const intruder = await startClusterNode({ nats, prefix, nodeId: "intruder", env: { SWITCHYARD_CLUSTER_PASSWORD: "wrong-password" } });
    try {
      const health = await request(intruder.url, "GET", "/health", { retry: false });
      expect(health.status).toBe(503);
      expect(health.body.cluster).toMatchObject({ connected: false, caughtUp: false });
      expect((await request(intruder.url, "POST", "/event", { token: keys.production.publishableKey, body: { event: "x", userId: "u" } })).status).toBe(401);
      expect(intruder.output.join("\n")).not.toContain("wrong-password");
      // Its store is empty and stays so: it knows no key, so the front-facing API refuses them.
      expect((await request(intruder.url, "GET", `/features/evaluated?publishableKey=${keys.production.publishableKey}`)).status).toBe(401);
      // Cluster status needs the cluster.
      expect((await request(intruder.url, "GET", "/admin/cluster", { token: intruder.adminToken, retry: false })).status).toBe(503);
    } finally {
      await intruder.kill();
    }
  });

  // Last: it takes the whole NATS cluster down.
  it("keeps a node cut off from NATS evaluating from its local rules, refusing tracking and changes with a retryable 503, and saying so in /health and its log", async () => {
    const [a] = nodes as [TestServer, TestServer, TestServer];
    const path = `/features/evaluated?publishableKey=${keys.production.publishableKey}&context.company.id=initech`;
    const before = await request(a.url, "GET", path);
    await Promise.all(nats.servers.map((server) => server.kill()));
    const health = await eventually(() => request(a.url, "GET", "/health", { retry: false }), (reply) => reply.status === 503);
    expect(health.body).toMatchObject({ success: false, cluster: { connected: false, caughtUp: false } });
    const evaluated = await request(a.url, "GET", path);
    expect(evaluated.status).toBe(200);
    expect(evaluated.body).toEqual(before.body);
    const tracked = await request(a.url, "POST", "/event", { token: keys.production.publishableKey, body: { event: "offline", userId: "u1" }, retry: false });
    expect(tracked.status).toBe(503);
    expect(tracked.headers.get("retry-after")).toBe("1");
    expect(tracked.body.error.code).toBe("CLUSTER_UNAVAILABLE");
    const change = await request(a.url, "PUT", `/admin/environments/${keys.production.id}/features/huddle/targeting`, { token: a.adminToken, body: { rules: [] }, retry: false });
    expect(change.status).toBe(503);
    expect(a.output.some((line) => line.includes('"cluster disconnected'))).toBe(true);

    // A node restarted while NATS is down starts anyway and serves from its store.
    const [, , c] = nodes as [TestServer, TestServer, TestServer];
    await c.kill();
    const restarted = await startClusterNode({ nats, prefix, nodeId: "c", dataDir: c.dataDir });
    nodes[2] = restarted;
    expect((await request(restarted.url, "GET", path)).body).toEqual(before.body);
    expect((await request(restarted.url, "GET", "/health", { retry: false })).status).toBe(503);
    expect((await request(restarted.url, "POST", "/event", { token: keys.production.publishableKey, body: { event: "offline", userId: "u1" }, retry: false })).status).toBe(503);

    // NATS comes back (same store dirs): the node reconnects, catches up and takes tracking again.
    await Promise.all(nats.servers.map((server) => server.start()));
    await eventually(() => request(a.url, "GET", "/health"), (reply) => reply.status === 200, 30_000);
    await eventually(() => request(restarted.url, "GET", "/health"), (reply) => reply.status === 200, 30_000);
    const back = await eventually(
      () => request(a.url, "POST", "/event", { token: keys.production.publishableKey, body: { event: "back", userId: "u1" } }),
      (reply) => reply.status === 200,
      30_000,
    );
    expect(back.body).toEqual({ success: true });
    await eventually(() => allEvents(restarted, keys.production.id), (list) => list.some((event) => event.event === "back"), 30_000);
    // SIGTERM drains and exits 0 in cluster mode too.
    expect(await a.stop()).toBe(0);
  }, 90_000);
});
