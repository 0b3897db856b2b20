/**
 * Promotion (API.md §15) over real HTTP: `POST …/features/:key/promote {to}` copies a feature's targeting (as saved,
 * segment references included) and config variants to another environment of its app — as a direct write through the
 * management path (one flagStateVersion step, history, audit, served at once), or, where the target's policy
 * requires approval, as a change request that reviewers approve and apply like any other.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, signIn, type Session } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const PRO = { type: "context", field: "company.plan", operator: "IS", values: ["pro"] };
const VARIANTS = [{ filter: { type: "constant", value: true }, key: "wide", payload: { columns: 3 } }];

describe(`promotion (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  let segmentId: string;
  let ana: Session;
  let ben: Session;
  let viewer: Session;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const production = () => `/admin/environments/${keys.production.id}`;
  const development = () => `/admin/environments/${keys.development.id}`;
  const productionVersion = async () => (await admin("GET", `${production()}/features`)).body.flagStateVersion as number;
  const evaluated = async (query: string) => (await request(server.url, "GET", `/features/evaluated?${query}&publishableKey=${keys.production.publishableKey}`)).body.features;
  const savedRules = () => [{ filter: PRO }, { filter: { type: "segment", segmentId } }];

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken);
    const segment = await admin("POST", `/admin/apps/${keys.app.id}/segments`, { name: "Design partners", filter: { type: "context", field: "company.id", operator: "ANY_OF", values: ["acme", "globex"] } });
    segmentId = segment.body.segment.id;
    for (const key of ["layout", "search"]) await admin("PUT", `/admin/apps/${keys.app.id}/features/${key}`, {});
    for (const key of ["layout", "search"]) {
      expect((await admin("PUT", `${development()}/features/${key}/targeting`, { rules: savedRules() })).status).toBe(200);
      expect((await admin("PUT", `${development()}/features/${key}/config`, { variants: VARIANTS })).status).toBe(200);
    }
    for (const [email, role] of [["ana@example.com", "editor"], ["ben@example.com", "editor"], ["viewer@example.com", "viewer"]] as const) await createMember(server.url, server.adminToken, email, role);
    [ana, ben, viewer] = await Promise.all(["ana@example.com", "ben@example.com", "viewer@example.com"].map((email) => signIn(server.url, email)));
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("copies targeting and config to the target as one direct write: one step, history, audit, served at once", async () => {
    expect((await evaluated("context.company.id=acme")).layout.isEnabled).toBe(false);
    const before = await productionVersion();
    const reply = await asSession(server.url, ana, "POST", `${development()}/features/layout/promote`, { to: keys.production.id, comment: "tested in development" });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toMatchObject({ outcome: "written", key: "layout", from: keys.development.id, to: keys.production.id, wrote: ["targeting", "config"], targetingVersion: 1, configVersion: 1, flagStateVersion: before + 1 });
    expect(await productionVersion()).toBe(before + 1);
    // Saved with its segment reference (the app's segment), served inlined.
    const shown = (await admin("GET", `${production()}/features/layout`)).body;
    expect(shown.targeting.segmentRules).toEqual(savedRules());
    expect(shown.config.variants).toEqual(VARIANTS);
    const history = (await admin("GET", `${production()}/features/layout/history`)).body.versions;
    expect(history).toEqual(expect.arrayContaining([expect.objectContaining({ kind: "targeting", version: 1, comment: "tested in development" }), expect.objectContaining({ kind: "config", version: 1, comment: "tested in development" })]));
    expect((await admin("GET", "/admin/audit?limit=1")).body.entries[0]).toMatchObject({
      action: "feature.promote",
      entity: { key: "layout", environmentId: keys.production.id },
      details: { from: { environmentId: keys.development.id, targetingVersion: 1, configVersion: 1 }, to: { environmentId: keys.production.id }, wrote: ["targeting", "config"], comment: "tested in development" },
    });
    const features = await evaluated("context.company.id=acme");
    expect(features.layout).toMatchObject({ isEnabled: true, targetingVersion: 1, config: { key: "wide", payload: { columns: 3 } } });
    expect((await evaluated("context.company.id=initech&context.company.plan=pro")).layout.isEnabled).toBe(true);
    expect((await evaluated("context.company.id=initech")).layout.isEnabled).toBe(false);
  });

  it("writes nothing when the target already holds the same, and only what differs otherwise", async () => {
    const before = await productionVersion();
    const same = await admin("POST", `${development()}/features/layout/promote`, { to: keys.production.id });
    expect(same.body).toMatchObject({ outcome: "unchanged", wrote: [], targetingVersion: 1, configVersion: 1, flagStateVersion: before });
    expect(await productionVersion()).toBe(before);
    expect((await admin("PUT", `${development()}/features/layout/config`, { variants: [] })).status).toBe(200);
    const configOnly = await admin("POST", `${development()}/features/layout/promote`, { to: keys.production.id });
    expect(configOnly.body).toMatchObject({ outcome: "written", wrote: ["config"], targetingVersion: 1, configVersion: 2, flagStateVersion: before + 1 });
  });

  it("proposes a change request where the target requires approval, which is reviewed and applied as any other", async () => {
    expect((await admin("PUT", `${production()}/policy`, { requireApproval: true, minApprovals: 1 })).status).toBe(200);
    try {
      const before = await productionVersion();
      const reply = await asSession(server.url, ana, "POST", `${development()}/features/search/promote`, { to: keys.production.id, comment: "ready" });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body).toMatchObject({
        outcome: "change-request",
        key: "search",
        changeRequest: {
          environmentId: keys.production.id,
          title: "Promote search from development to production",
          state: "open",
          revision: 1,
          changes: [{ feature: "search", base: { targetingVersion: 0, configVersion: 0 }, targeting: { rules: savedRules() }, config: { variants: VARIANTS } }],
        },
      });
      // Nothing written yet.
      expect(await productionVersion()).toBe(before);
      expect((await evaluated("context.company.id=acme")).search.isEnabled).toBe(false);
      const id = reply.body.changeRequest.id;
      expect((await asSession(server.url, ben, "POST", `${production()}/change-requests/${id}/reviews`, { decision: "approve" })).body.changeRequest.state).toBe("approved");
      const applied = await asSession(server.url, ana, "POST", `${production()}/change-requests/${id}/apply`, {});
      expect(applied.status, JSON.stringify(applied.body)).toBe(200);
      expect((await evaluated("context.company.id=acme")).search).toMatchObject({ isEnabled: true, targetingVersion: 1, config: { key: "wide" } });
      // A promotion that changes nothing proposes nothing.
      const again = await asSession(server.url, ana, "POST", `${development()}/features/search/promote`, { to: keys.production.id });
      expect(again.body).toMatchObject({ outcome: "unchanged" });
      // An owner may still write directly, saying why; the audit entry keeps it.
      expect((await admin("PUT", `${development()}/features/search/targeting`, { rules: [{ filter: PRO }] })).status).toBe(200);
      const held = await admin("POST", `${development()}/features/search/promote`, { to: keys.production.id });
      expect(held.body.outcome).toBe("change-request");
      const bypassed = await admin("POST", `${development()}/features/search/promote?bypass=true&reason=hotfix`, { to: keys.production.id });
      expect(bypassed.body).toMatchObject({ outcome: "written", wrote: ["targeting"] });
      expect((await admin("GET", "/admin/audit?limit=1")).body.entries[0]).toMatchObject({ action: "feature.promote", details: { bypass: true, reason: "hotfix" } });
    } finally {
      await admin("PUT", `${production()}/policy`, { requireApproval: false });
    }
  });

  it("refuses the same environment, another app's, an unknown one, a missing `to`, an unknown feature and a viewer", async () => {
    const before = await productionVersion();
    const other = await createApp(server.url, server.adminToken, "Other app");
    const promote = (body: unknown, key = "layout") => admin("POST", `${development()}/features/${key}/promote`, body);
    for (const to of [keys.development.id, other.production.id, "env_nope"]) {
      const reply = await promote({ to });
      expect(reply.status, to).toBe(400);
      expect(reply.body.error.validationErrors[0].path).toBe("to");
    }
    const missing = await promote({});
    expect(missing.status).toBe(400);
    expect(missing.body.error.validationErrors[0].path).toBe("to");
    expect((await promote({ to: keys.production.id }, "nope")).status).toBe(404);
    expect((await admin("POST", `/admin/environments/env_nope/features/layout/promote`, { to: keys.production.id })).status).toBe(404);
    expect((await asSession(server.url, viewer, "POST", `${development()}/features/layout/promote`, { to: keys.production.id })).status).toBe(403);
    expect(await productionVersion()).toBe(before);
  });
});
