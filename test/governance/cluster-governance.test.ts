/**
 * Governance across a real three-server NATS cluster and three Switchyard nodes: the policy set through one node holds
 * writes on another; a change request created, reviewed and applied through three different nodes leaves the same
 * versions everywhere; a scheduled request, armed on every node, is applied exactly once (one version, one audit
 * entry) at its time; and when a node is killed just before the time, the others fire it once and the killed node,
 * restarted, adds nothing.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterPrefix, eventually, startClusterNode, startNatsCluster, type NatsCluster } from "../support/cluster.js";
import { createApp, request } from "../support/http.js";
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
});
