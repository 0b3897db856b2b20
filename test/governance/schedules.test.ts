/**
 * Scheduled change requests (API.md §15) on a standalone service over real HTTP: a request with `scheduledAt` applies
 * at that time once approved, exactly once and within a second, by the service's own scheduler; a conflict at that
 * moment suspends it with an audit entry; a service that was down at that moment applies it on start and records the
 * real time. Times are a few seconds ahead: nothing sleeps for minutes.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { makeDataDir, NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const PRO = [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }];

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`scheduled change requests (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  const dataDir = makeDataDir();
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const requests = (environmentId: string) => `/admin/environments/${environmentId}/change-requests`;
  /** Polls a request until it leaves `scheduled` (or the deadline passes). */
  const settled = async (environmentId: string, id: string, deadlineMs = 10_000) => {
    const until = Date.now() + deadlineMs;
    for (;;) {
      const request = (await admin("GET", `${requests(environmentId)}/${id}`)).body.changeRequest;
      if (request.state !== "scheduled" || Date.now() > until) return request;
      await sleep(100);
    }
  };
  const history = async (environmentId: string, key: string) => (await admin("GET", `/admin/environments/${environmentId}/features/${key}/history`)).body.versions;

  beforeAll(async () => {
    server = await startServer({ dataDir, env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken);
    for (const key of ["huddle", "calls", "late"]) await admin("PUT", `/admin/apps/${keys.app.id}/features/${key}`, {});
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("applies a request at its time, once, where no approval is required (creating it schedules it)", async () => {
    const scheduledAt = inSeconds(2);
    const created = await admin("POST", requests(keys.development.id), { title: "Huddles at two", changes: [{ feature: "huddle", targeting: { rules: EVERYONE } }], scheduledAt });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.changeRequest).toMatchObject({ state: "scheduled", scheduledAt });
    const request = await settled(keys.development.id, created.body.changeRequest.id);
    expect(request.state).toBe("applied");
    const late = Date.parse(request.appliedAt) - Date.parse(scheduledAt);
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(1000);
    const versions = (await history(keys.development.id, "huddle")).filter((entry: { kind: string }) => entry.kind === "targeting");
    expect(versions).toEqual([expect.objectContaining({ version: 1, rules: EVERYONE, changeRequestId: request.id, at: request.appliedAt })]);
    const audit = (await admin("GET", "/admin/audit?limit=1000")).body.entries.filter((entry: { entity: { id: string } }) => entry.entity.id === request.id);
    expect(audit.map((entry: { action: string }) => entry.action)).toEqual(["change-request.apply", "change-request.create"]);
  });

  it("waits for approval where it is required, then fires at its time", async () => {
    await admin("PUT", `/admin/environments/${keys.production.id}/policy`, { requireApproval: true, allowSelfApproval: true });
    const scheduledAt = inSeconds(2);
    const created = await admin("POST", requests(keys.production.id), { title: "Calls later", changes: [{ feature: "calls", targeting: { rules: PRO } }], scheduledAt });
    expect(created.body.changeRequest.state).toBe("open");
    const approved = await admin("POST", `${requests(keys.production.id)}/${created.body.changeRequest.id}/reviews`, { decision: "approve" });
    expect(approved.body.changeRequest.state).toBe("scheduled");
    const request = await settled(keys.production.id, created.body.changeRequest.id);
    expect(request.state).toBe("applied");
    expect(Date.parse(request.appliedAt)).toBeGreaterThanOrEqual(Date.parse(scheduledAt));
    expect((await history(keys.production.id, "calls")).at(-1)).toMatchObject({ version: 1, rules: PRO, changeRequestId: request.id });
  });

  it("applies at once a request approved after its time had passed", async () => {
    const scheduledAt = inSeconds(1);
    const created = await admin("POST", requests(keys.production.id), { title: "Late approval", changes: [{ feature: "late", config: { variants: [] } }], scheduledAt });
    await sleep(Math.max(0, Date.parse(scheduledAt) - Date.now()) + 300);
    expect((await admin("GET", `${requests(keys.production.id)}/${created.body.changeRequest.id}`)).body.changeRequest.state).toBe("open");
    const approvedAt = Date.now();
    await admin("POST", `${requests(keys.production.id)}/${created.body.changeRequest.id}/reviews`, { decision: "approve" });
    const request = await settled(keys.production.id, created.body.changeRequest.id);
    expect(request.state).toBe("applied");
    expect(Date.parse(request.appliedAt)).toBeGreaterThanOrEqual(approvedAt);
    expect(Date.parse(request.appliedAt) - approvedAt).toBeLessThan(1000);
  });

  it("suspends a request whose base moved before its time, writing nothing, with an audit entry saying why", async () => {
    const created = await admin("POST", requests(keys.development.id), { title: "Calls at three", changes: [{ feature: "calls", targeting: { rules: EVERYONE } }], scheduledAt: inSeconds(2) });
    expect((await admin("PUT", `/admin/environments/${keys.development.id}/features/calls/targeting`, { rules: PRO })).status).toBe(200);
    const request = await settled(keys.development.id, created.body.changeRequest.id);
    expect(request.state).toBe("suspended");
    expect(request.suspendedReason).toContain("calls (now targeting version 1");
    expect((await history(keys.development.id, "calls")).filter((entry: { kind: string }) => entry.kind === "targeting")).toHaveLength(1);
    const audit = (await admin("GET", "/admin/audit?limit=1")).body.entries[0];
    expect(audit).toMatchObject({ action: "change-request.suspend", entity: { id: request.id }, details: { reason: request.suspendedReason } });
    // Suspended is not cancellable (API.md §15's states): the author edits it onto the new base, which opens it again.
    expect((await admin("POST", `${requests(keys.development.id)}/${request.id}/cancel`)).status).toBe(409);
    const edited = await admin("PUT", `${requests(keys.development.id)}/${request.id}`, { changes: [{ feature: "calls", targeting: { rules: EVERYONE } }], scheduledAt: null });
    expect(edited.body.changeRequest).toMatchObject({ state: "open", revision: 2, suspendedReason: null, changes: [{ base: { targetingVersion: 1 } }] });
  });

  it("suspends a scheduled request when the policy came to require approval it does not hold", async () => {
    const created = await admin("POST", requests(keys.development.id), { title: "Before the policy", changes: [{ feature: "huddle", config: { variants: [] } }], scheduledAt: inSeconds(2) });
    expect(created.body.changeRequest.state).toBe("scheduled");
    await admin("PUT", `/admin/environments/${keys.development.id}/policy`, { requireApproval: true });
    const request = await settled(keys.development.id, created.body.changeRequest.id);
    expect(request).toMatchObject({ state: "suspended", suspendedReason: expect.stringContaining("requires 1 approval(s)") });
    expect((await history(keys.development.id, "huddle")).filter((entry: { kind: string }) => entry.kind === "config")).toHaveLength(0);
    await admin("PUT", `/admin/environments/${keys.development.id}/policy`, { requireApproval: false });
  });

  it("fires on start a request whose time passed while the service was down, recording the real time, once", async () => {
    const scheduledAt = inSeconds(2);
    const created = await admin("POST", requests(keys.development.id), { title: "While down", changes: [{ feature: "late", targeting: { rules: EVERYONE } }], scheduledAt });
    const id = created.body.changeRequest.id;
    // Killed, not stopped: nothing of a graceful shutdown helps the next start.
    await server.kill();
    await sleep(Math.max(0, Date.parse(scheduledAt) - Date.now()) + 1500);
    const startedAt = Date.now();
    server = await startServer({ dataDir, env: ACCOUNT_TEST_ENV });
    const request = await settled(keys.development.id, id);
    expect(request.state).toBe("applied");
    // The real time it was applied: after the restart, not the scheduled time.
    expect(Date.parse(request.appliedAt)).toBeGreaterThanOrEqual(startedAt);
    expect(Date.parse(request.appliedAt) - Date.parse(scheduledAt)).toBeGreaterThan(1500);
    const versions = (await history(keys.development.id, "late")).filter((entry: { kind: string }) => entry.kind === "targeting");
    expect(versions).toEqual([expect.objectContaining({ version: 1, changeRequestId: id, at: request.appliedAt })]);
    // Another restart fires nothing again.
    await server.stop();
    server = await startServer({ dataDir, env: ACCOUNT_TEST_ENV });
    await sleep(300);
    expect((await history(keys.development.id, "late")).filter((entry: { kind: string }) => entry.kind === "targeting")).toHaveLength(1);
  });
});
