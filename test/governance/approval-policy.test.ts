/**
 * An environment's approval policy (API.md §15) over real HTTP: while production requires approval, every direct
 * targeting or config write there — the management API, stage application, a flags-as-files import, the kill switch
 * turned back on — is refused with 409 APPROVAL_REQUIRED for anyone but an owner, and writes nothing (the MCP tool
 * proposes a change request instead); an owner writes with bypass=true and a reason, which the audit entry shows; switching a feature off is never held.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, createToken, signIn, type Session } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { connectMcp, type McpSession } from "../support/mcp.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const NOBODY = [{ filter: { type: "constant", value: false } }];

describe(`approval policy (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  let owner: Session;
  let editor: Session;
  let mcp: McpSession;
  /** A stand-in Unleash on 127.0.0.1 answering the importer's calls: one feature, on in production. */
  let unleash: Server;
  let unleashUrl: string;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const production = () => `/admin/environments/${keys.production.id}`;
  const development = () => `/admin/environments/${keys.development.id}`;
  const state = async () => {
    const reply = await admin("GET", `${production()}/features`);
    const huddle = reply.body.features.find((feature: { key: string }) => feature.key === "huddle");
    return { flagStateVersion: reply.body.flagStateVersion, targeting: huddle.targeting.version, config: huddle.config.version, enabled: huddle.enabled };
  };
  const expectHeld = (reply: { status: number; body: any }) => {
    expect(reply.status, JSON.stringify(reply.body)).toBe(409);
    expect(reply.body.error.code).toBe("APPROVAL_REQUIRED");
  };

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken);
    await admin("PUT", `/admin/apps/${keys.app.id}/features/huddle`, { name: "Huddles" });
    await createMember(server.url, server.adminToken, "owner@example.com", "owner");
    await createMember(server.url, server.adminToken, "editor@example.com", "editor");
    owner = await signIn(server.url, "owner@example.com");
    editor = await signIn(server.url, "editor@example.com");
    const token = await createToken(server.url, editor, "agent");
    mcp = await connectMcp(`${server.url}/api/mcp`, { token: token.secret });
    unleash = createServer((incoming, response) => {
      const json = (body: unknown) => response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
      const path = incoming.url ?? "";
      if (path === "/api/admin/environments") return json({ environments: [{ name: "production" }] });
      if (path === "/api/admin/projects") return json({ projects: [{ id: "default" }] });
      if (path === "/api/admin/projects/default/features") return json({ features: [{ name: "from-unleash" }] });
      if (path.startsWith("/api/admin/projects/default/features/from-unleash")) return json({ name: "from-unleash", environments: [{ name: "production", enabled: true, strategies: [{ name: "default", parameters: {} }] }] });
      if (path === "/api/admin/segments") return json({ segments: [] });
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => unleash.listen(0, "127.0.0.1", resolve));
    unleashUrl = `http://127.0.0.1:${(unleash.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    unleash?.closeAllConnections();
    await new Promise((resolve) => unleash?.close(resolve));
    await mcp?.close();
    await server?.stop();
  });

  it("reads the defaults: no approval; confirmation asked in production only", async () => {
    expect((await admin("GET", `${production()}/policy`)).body.policy).toEqual({ requireApproval: false, minApprovals: 1, allowSelfApproval: false, confirmChanges: true });
    expect((await admin("GET", `${development()}/policy`)).body.policy).toEqual({ requireApproval: false, minApprovals: 1, allowSelfApproval: false, confirmChanges: false });
  });

  it("lets only an owner or the admin token set it, and validates the body naming the field", async () => {
    expect((await asSession(server.url, editor, "PUT", `${production()}/policy`, { requireApproval: true })).status).toBe(403);
    const bad = await asSession(server.url, owner, "PUT", `${production()}/policy`, { requireApproval: true, minApprovals: 9 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.validationErrors[0].path).toBe("minApprovals");
    expect((await admin("GET", `${production()}/policy`)).body.policy.requireApproval).toBe(false);
    const set = await asSession(server.url, owner, "PUT", `${production()}/policy`, { requireApproval: true });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    // Fields left out keep their value.
    expect(set.body.policy).toEqual({ requireApproval: true, minApprovals: 1, allowSelfApproval: false, confirmChanges: true });
    const audit = (await admin("GET", "/admin/audit?limit=1")).body.entries[0];
    expect(audit).toMatchObject({ action: "policy.update", entity: { kind: "policy", environmentId: keys.production.id }, details: { to: { requireApproval: true } } });
  });

  it("holds an editor's targeting and config writes, and writes nothing", async () => {
    const before = await state();
    expectHeld(await asSession(server.url, editor, "PUT", `${production()}/features/huddle/targeting`, { rules: EVERYONE }));
    expectHeld(await asSession(server.url, editor, "PUT", `${production()}/features/huddle/config`, { variants: [] }));
    // A non-owner's bypass is no way round it.
    expectHeld(await asSession(server.url, editor, "PUT", `${production()}/features/huddle/targeting?bypass=true&reason=hurry`, { rules: EVERYONE }));
    expect(await state()).toEqual(before);
    // Development requires nothing.
    expect((await asSession(server.url, editor, "PUT", `${development()}/features/huddle/targeting`, { rules: EVERYONE })).status).toBe(200);
  });

  it("holds stage application and a flags-as-files import that would write production", async () => {
    const before = await state();
    expectHeld(await asSession(server.url, editor, "PUT", `/admin/apps/${keys.app.id}/features/huddle/stage`, { stage: "General availability" }));
    const document = (await admin("GET", `/admin/apps/${keys.app.id}/export`)).body.document;
    const huddle = document.features.find((feature: { key: string }) => feature.key === "huddle");
    huddle.environments.production.rules = EVERYONE;
    expectHeld(await asSession(server.url, editor, "POST", `/admin/apps/${keys.app.id}/import`, document));
    expect(await state()).toEqual(before);
    // An import that leaves production alone goes through.
    huddle.environments.production.rules = [];
    huddle.environments.development.rules = NOBODY;
    const allowed = await asSession(server.url, editor, "POST", `/admin/apps/${keys.app.id}/import`, document);
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    expect(await state()).toEqual(before);
  });

  it("holds an Unleash import that would write production", async () => {
    const body = { url: unleashUrl, token: "unleash-token", environments: { production: "production" } };
    const features = async () => (await admin("GET", `/admin/apps/${keys.app.id}/features`)).body.features.map((feature: { key: string }) => feature.key);
    expectHeld(await asSession(server.url, editor, "POST", `/admin/apps/${keys.app.id}/import/unleash`, body));
    expect(await features()).not.toContain("from-unleash");
    // Into development, which requires nothing, it goes through.
    const elsewhere = await asSession(server.url, editor, "POST", `/admin/apps/${keys.app.id}/import/unleash`, { ...body, environments: { production: "development" } });
    expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(200);
    expect(await features()).toContain("from-unleash");
  });

  it("holds the MCP tool that writes targeting: it proposes a change request instead", async () => {
    const before = await state();
    const reply = await mcp.call("set_flag_targeting", { appId: keys.app.id, key: "huddle", environmentId: keys.production.id, enabled: true });
    expect(reply.isError, reply.text).toBe(false);
    expect(reply.value).toMatchObject({ proposed: true, changeRequest: { state: "open", changes: [{ feature: "huddle", targeting: { rules: EVERYONE } }] } });
    expect(await state()).toEqual(before);
    expect((await admin("POST", `${production()}/change-requests/${reply.value.changeRequest.id}/cancel`)).status).toBe(200);
    const elsewhere = await mcp.call("set_flag_targeting", { appId: keys.app.id, key: "huddle", environmentId: keys.development.id, enabled: true });
    expect(elsewhere.isError, elsewhere.text).toBe(false);
  });

  it("never holds switching a feature off; switching it back on obeys the policy", async () => {
    const off = await asSession(server.url, editor, "PUT", `${production()}/features/huddle/enabled`, { enabled: false, comment: "stop it" });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    expect((await state()).enabled).toBe(false);
    expectHeld(await asSession(server.url, editor, "PUT", `${production()}/features/huddle/enabled`, { enabled: true }));
    expect((await state()).enabled).toBe(false);
    // Saying "off" again changes nothing and is not held either.
    expect((await asSession(server.url, editor, "PUT", `${production()}/features/huddle/enabled`, { enabled: false })).body).toMatchObject({ changed: false });
  });

  it("makes an owner (and the admin token) say bypass with a reason, and audits it", async () => {
    const before = await state();
    expectHeld(await asSession(server.url, owner, "PUT", `${production()}/features/huddle/targeting`, { rules: EVERYONE }));
    expectHeld(await admin("PUT", `${production()}/features/huddle/targeting`, { rules: EVERYONE }));
    const noReason = await asSession(server.url, owner, "PUT", `${production()}/features/huddle/targeting?bypass=true`, { rules: EVERYONE });
    expect(noReason.status).toBe(400);
    expect(noReason.body.error.validationErrors[0].path).toBe("reason");
    expect(await state()).toEqual(before);

    const bypassed = await asSession(server.url, owner, "PUT", `${production()}/features/huddle/targeting?bypass=true`, { rules: EVERYONE, reason: "hotfix for a customer", comment: "everyone" });
    expect(bypassed.status, JSON.stringify(bypassed.body)).toBe(200);
    const entry = (await admin("GET", "/admin/audit?limit=1")).body.entries[0];
    expect(entry).toMatchObject({ action: "targeting.update", actor: { kind: "member", email: "owner@example.com" }, details: { bypass: true, reason: "hotfix for a customer", comment: "everyone" } });
    const on = await admin("PUT", `${production()}/features/huddle/enabled`, { enabled: true, bypass: true, reason: "incident over" });
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect((await admin("GET", "/admin/audit?limit=1")).body.entries[0]).toMatchObject({ action: "feature.enable", actor: { kind: "admin" }, details: { bypass: true, reason: "incident over" } });
    expect(await state()).toMatchObject({ targeting: before.targeting + 1, enabled: true, flagStateVersion: before.flagStateVersion + 2 });
  });

  it("holds re-applying a stage and editing a segment's filter where they would rewrite production's targeting", async () => {
    const bypass = "?bypass=true&reason=setting%20up";
    expect((await asSession(server.url, owner, "PUT", `/admin/apps/${keys.app.id}/features/huddle/stage${bypass}`, { stage: "Beta" })).status).toBe(200);
    const segment = await admin("POST", `/admin/apps/${keys.app.id}/segments`, { name: "Pro", filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } });
    const segmentId = segment.body.segment.id;
    const uses = await asSession(server.url, owner, "PUT", `${production()}/features/huddle/targeting${bypass}`, { rules: [{ filter: { type: "segment", segmentId } }] });
    expect(uses.status, JSON.stringify(uses.body)).toBe(200);
    const before = await state();
    expectHeld(await asSession(server.url, editor, "PATCH", `/admin/apps/${keys.app.id}/stages/st_beta`, { reapply: true }));
    expectHeld(await asSession(server.url, editor, "PATCH", `/admin/apps/${keys.app.id}/segments/${segmentId}`, { filter: { type: "constant", value: true } }));
    expect(await state()).toEqual(before);
    // What rewrites no targeting in production is not held.
    expect((await asSession(server.url, editor, "PATCH", `/admin/apps/${keys.app.id}/stages/st_beta`, { order: 3 })).status).toBe(200);
    expect((await asSession(server.url, editor, "PATCH", `/admin/apps/${keys.app.id}/segments/${segmentId}`, { description: "paying" })).status).toBe(200);
  });

  it("lets writes through again once the policy is off", async () => {
    expect((await admin("PUT", `${production()}/policy`, { requireApproval: false })).status).toBe(200);
    expect((await asSession(server.url, editor, "PUT", `${production()}/features/huddle/config`, { variants: [] })).status).toBe(200);
  });
});
