/**
 * Governance across a real three-server NATS cluster and three Switchyard nodes: the policy set through one node holds
 * writes on another; a change request created, reviewed and applied through three different nodes leaves the same
 * versions everywhere; a scheduled request, armed on every node, is applied exactly once (one version, one audit
 * entry) at its time; and when a node is killed just before the time, the others fire it once and the killed node,
 * restarted, adds nothing. A guarded rollout (API.md §17) driven by every node's driver at once, with the official
 * node SDK's traffic sent to every node and one node killed -9 mid-rollout, applies each step once and ends the same on
 * every node.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterPrefix, eventually, startClusterNode, startNatsCluster, type NatsCluster } from "../support/cluster.js";
import { createApp, request } from "../support/http.js";
import { seededRandom, sendRound } from "../support/rollouts.js";
import type { TestServer } from "../support/server.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const PRO = [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }];

describe("governance in cluster mode", () => {
  let nats: NatsCluster;
  const prefix = clusterPrefix();
  let nodes: TestServer[];
  let keys: Awaited<ReturnType<typeof createApp>>;
  const admin = (node: TestServer, method: string, path: string, body?: unknown) => request(node.url, method, path, { token: node.adminToken, ...(body !== undefined ? { body } : {}) });
  const requests = () => `/admin/environments/${keys.production.id}/change-requests`;
  const targetingHistory = async (node: TestServer, key: string) =>
    (await admin(node, "GET", `/admin/environments/${keys.production.id}/features/${key}/history`)).body.versions.filter((entry: { kind: string }) => entry.kind === "targeting");

  beforeAll(async () => {
    nats = await startNatsCluster();
    nodes = await Promise.all(["a", "b", "c"].map((nodeId) => startClusterNode({ nats, prefix, nodeId })));
    const [a] = nodes as [TestServer];
    keys = await createApp(a.url, a.adminToken);
    for (const key of ["huddle", "calls"]) expect((await admin(a, "PUT", `/admin/apps/${keys.app.id}/features/${key}`, {})).status).toBe(200);
    // The admin token proposes and approves here: its own requests need self-approval.
    expect((await admin(a, "PUT", `/admin/environments/${keys.production.id}/policy`, { requireApproval: true, allowSelfApproval: true })).status).toBe(200);
  }, 150_000);
  afterAll(async () => {
    await Promise.all((nodes ?? []).map((node) => node.kill()));
    await nats?.stop();
    for (const node of nodes ?? []) rmSync(node.dataDir, { recursive: true, force: true });
  });

  it("holds a direct write on every node once the policy is set through one", async () => {
    for (const node of nodes) {
      await eventually(() => admin(node, "GET", `/admin/environments/${keys.production.id}/policy`), (reply) => reply.body.policy?.requireApproval === true);
      const held = await admin(node, "PUT", `/admin/environments/${keys.production.id}/features/huddle/targeting`, { rules: EVERYONE });
      expect(held.status).toBe(409);
      expect(held.body.error.code).toBe("APPROVAL_REQUIRED");
    }
  });

  it("creates, approves and applies a request through three nodes: the same versions everywhere", async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    const created = await admin(a, "POST", requests(), { title: "Huddles for pro", changes: [{ feature: "huddle", targeting: { rules: PRO } }] });
    const id = created.body.changeRequest.id;
    await eventually(() => admin(b, "GET", `${requests()}/${id}`), (reply) => reply.status === 200);
    expect((await admin(b, "POST", `${requests()}/${id}/reviews`, { decision: "approve" })).body.changeRequest.state).toBe("approved");
    await eventually(() => admin(c, "GET", `${requests()}/${id}`), (reply) => reply.body.changeRequest?.state === "approved");
    const applied = await admin(c, "POST", `${requests()}/${id}/apply`);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    for (const node of nodes) {
      const seen = await eventually(() => admin(node, "GET", `/admin/environments/${keys.production.id}/features/huddle`), (reply) => reply.body.targeting?.version === 1);
      expect(seen.body.flagStateVersion).toBe(applied.body.flagStateVersion);
      expect((await targetingHistory(node, "huddle")).at(-1)).toMatchObject({ version: 1, changeRequestId: id });
    }
  });

  it("applies a scheduled request once at its time, though every node's scheduler armed it", async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    const scheduledAt = new Date(Date.now() + 3000).toISOString();
    const created = await admin(a, "POST", requests(), { title: "Calls at three", changes: [{ feature: "calls", targeting: { rules: EVERYONE } }], scheduledAt });
    const id = created.body.changeRequest.id;
    await eventually(() => admin(b, "GET", `${requests()}/${id}`), (reply) => reply.status === 200);
    expect((await admin(b, "POST", `${requests()}/${id}/reviews`, { decision: "approve" })).body.changeRequest.state).toBe("scheduled");
    for (const node of nodes) {
      const request = (await eventually(() => admin(node, "GET", `${requests()}/${id}`), (reply) => reply.body.changeRequest?.state === "applied", 15_000)).body.changeRequest;
      const late = Date.parse(request.appliedAt) - Date.parse(scheduledAt);
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThan(1000);
    }
    // Give any late duplicate firing time to arrive, then count what was written.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const node of [a, b, c]) {
      expect(await targetingHistory(node, "calls")).toEqual([expect.objectContaining({ version: 1, changeRequestId: id })]);
      const audit = (await admin(node, "GET", "/admin/audit?limit=1000")).body.entries.filter((entry: { entity: { id: string }; action: string }) => entry.entity.id === id && entry.action === "change-request.apply");
      expect(audit).toHaveLength(1);
    }
  });

  it("fires once though a node dies just before the time, and adds nothing when it comes back", async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    // Every node's scheduler races to fire; whichever would have won, killing one must not lose or double the firing.
    const scheduledAt = new Date(Date.now() + 4000).toISOString();
    const created = await admin(b, "POST", requests(), { title: "Huddles for all", changes: [{ feature: "huddle", targeting: { rules: EVERYONE } }], scheduledAt });
    const id = created.body.changeRequest.id;
    expect((await admin(b, "POST", `${requests()}/${id}/reviews`, { decision: "approve" })).body.changeRequest.state).toBe("scheduled");
    for (const node of nodes) await eventually(() => admin(node, "GET", `${requests()}/${id}`), (reply) => reply.body.changeRequest?.state === "scheduled");
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(scheduledAt) - Date.now() - 300)));
    await a.kill();
    for (const node of [b, c]) await eventually(() => admin(node, "GET", `${requests()}/${id}`), (reply) => reply.body.changeRequest?.state === "applied", 15_000);
    const revived = await startClusterNode({ nats, prefix, nodeId: "a", dataDir: a.dataDir });
    nodes[0] = revived;
    await eventually(() => admin(revived, "GET", `${requests()}/${id}`), (reply) => reply.body.changeRequest?.state === "applied", 30_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const node of [revived, b, c]) {
      const fromRequest = (await targetingHistory(node, "huddle")).filter((entry: { changeRequestId?: string }) => entry.changeRequestId === id);
      expect(fromRequest).toHaveLength(1);
      const audit = (await admin(node, "GET", "/admin/audit?limit=1000")).body.entries.filter((entry: { entity: { id: string }; action: string }) => entry.entity.id === id && entry.action === "change-request.apply");
      expect(audit).toHaveLength(1);
    }
  }, 90_000);

  it("drives a rollout once per step though every node's driver races, and finishes it when a node is killed mid-rollout", async () => {
    const [a, b, c] = nodes as [TestServer, TestServer, TestServer];
    // Development requires no approval: the rollout starts at once.
    const env = `/admin/environments/${keys.development.id}`;
    expect((await admin(a, "PUT", `/admin/apps/${keys.app.id}/features/racing`, {})).status).toBe(200);
    expect((await admin(a, "PUT", `${env}/features/racing/targeting`, { rules: EVERYONE })).status).toBe(200);
    await eventually(() => admin(b, "GET", `${env}/features/racing`), (reply) => reply.body.targeting?.version === 1);
    const started = await admin(b, "POST", `${env}/features/racing/rollouts`, { steps: [20, 40, 60, 100], stepSeconds: 1, minExposures: 20 });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const id = started.body.rollout.id as string;
    const rolloutOn = async (node: TestServer) => (await admin(node, "GET", `${env}/features/racing/rollouts/${id}`)).body.rollout;

    // Traffic to every live node in turn; c is killed -9 once the rollout has left its first step.
    const random = seededRandom(11);
    let live = [a, b, c];
    let killed = false;
    // Started on b: a answers once the replicated start has reached it (a read right away could find none yet).
    let rollout = await eventually(() => rolloutOn(a), (seen) => seen !== undefined);
    for (let round = 0, until = Date.now() + 90_000; rollout.state === "running" && Date.now() < until; round++) {
      const node = live[round % live.length]!;
      await sendRound(node, keys.development.secretKey, "racing", { rates: {}, plan: () => "pro" }, 80, random, `race-${round}`);
      rollout = await rolloutOn(a);
      if (!killed && rollout.step >= 1) {
        await c.kill();
        killed = true;
        live = [a, b];
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(killed).toBe(true);
    expect(rollout.state, JSON.stringify(rollout)).toBe("completed");

    // Any late duplicate decision has had time to arrive: each step was written once, everywhere the same.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const revived = await startClusterNode({ nats, prefix, nodeId: "c", dataDir: c.dataDir });
    nodes[2] = revived;
    await eventually(() => rolloutOn(revived), (seen) => seen?.state === "completed", 30_000);
    const views = await Promise.all([a, b, revived].map(rolloutOn));
    for (const view of views.slice(1)) expect(view).toEqual(views[0]);
    expect(views[0].transitions.map((transition: { action: string; step: number }) => [transition.action, transition.step])).toEqual([
      ["rollout.started", 0],
      ["rollout.advanced", 1],
      ["rollout.advanced", 2],
      ["rollout.completed", 3],
    ]);
    for (const node of [a, b, revived]) {
      const history = (await admin(node, "GET", `${env}/features/racing/history`)).body.versions.filter((entry: { kind: string; rolloutId?: string }) => entry.kind === "targeting" && entry.rolloutId === id);
      expect(history.map((entry: { version: number }) => entry.version)).toEqual([2, 3, 4, 5]);
      expect(views[0].steps.map((step: { targetingVersion: number }) => step.targetingVersion)).toEqual([2, 3, 4, 5]);
      const audit = (await admin(node, "GET", "/admin/audit?limit=1000")).body.entries.filter((entry: { entity: { id: string } }) => entry.entity.id === id);
      expect(audit.map((entry: { action: string }) => entry.action).sort()).toEqual(["rollout.advanced", "rollout.advanced", "rollout.completed", "rollout.started"]);
      const feature = (await admin(node, "GET", `${env}/features/racing`)).body;
      expect(feature.targeting).toMatchObject({ version: 5, rules: EVERYONE });
    }
  }, 150_000);
});
