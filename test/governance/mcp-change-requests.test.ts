/**
 * The MCP tools under an approval policy (API.md §12, §15), through the official MCP SDK client over real HTTP: where
 * production requires approval, set_flag_targeting writes nothing and proposes a change request holding the rules it
 * would have written (its title and description from the call, or a default title), answered with the request's id,
 * state and a dashboard link; list_change_requests and get_change_request follow it through review and apply, after
 * which the rules are the ones the agent asked for. Elsewhere the tool writes as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, createToken, signIn, type Session } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { connectMcp, type McpSession } from "../support/mcp.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const ACME_ONLY = [{ filter: { type: "context", field: "company.id", operator: "ANY_OF", values: ["acme"] } }];

describe(`MCP tools under an approval policy (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  let author: Session;
  let reviewer: Session;
  let mcp: McpSession;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const production = () => `/admin/environments/${keys.production.id}`;
  const huddle = async () => (await admin("GET", `${production()}/features/huddle`)).body.targeting as { version: number; rules: unknown[] };

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken);
    await admin("PUT", `/admin/apps/${keys.app.id}/features/huddle`, { name: "Huddles" });
    await createMember(server.url, server.adminToken, "agent-owner@example.com", "editor");
    await createMember(server.url, server.adminToken, "reviewer@example.com", "editor");
    author = await signIn(server.url, "agent-owner@example.com");
    reviewer = await signIn(server.url, "reviewer@example.com");
    const token = await createToken(server.url, author, "agent");
    mcp = await connectMcp(`${server.url}/api/mcp`, { token: token.secret });
    expect((await admin("PUT", `${production()}/policy`, { requireApproval: true, minApprovals: 1 })).status).toBe(200);
  });
  afterAll(async () => {
    await mcp?.close();
    await server?.stop();
  });

  it("advertises the change-request tools and the new fields of set_flag_targeting", async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["list_change_requests", "get_change_request"]));
    const targeting = tools.find((tool) => tool.name === "set_flag_targeting")!;
    expect(Object.keys(targeting.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["title", "description"]));
    expect(targeting.description).toMatch(/change request/);
  });

  it("proposes the rules as a change request, writes nothing, and says so; a person approves and applies it", async () => {
    const before = await huddle();
    const reply = await mcp.call("set_flag_targeting", {
      appId: keys.app.id,
      key: "huddle",
      environmentId: keys.production.id,
      companyIds: ["acme"],
      title: "Huddles for acme",
      description: "Pilot customer",
    });
    expect(reply.isError, reply.text).toBe(false);
    const proposed = reply.value;
    expect(proposed).toMatchObject({
      proposed: true,
      changeRequest: { title: "Huddles for acme", description: "Pilot customer", state: "open", revision: 1, changes: [{ feature: "huddle", targeting: { rules: ACME_ONLY } }] },
    });
    const id: string = proposed.changeRequest.id;
    expect(proposed.message).toContain(id);
    expect(proposed.message).toMatch(/requires approval/);
    expect(proposed.message).toMatch(/awaits review/);
    expect(proposed.changeRequest.url).toBe(`${server.url}/dashboard/#/apps/${keys.app.id}/environments/${keys.production.id}/change-requests/${id}`);
    expect(proposed.changeRequest.changes[0].diff.targeting.rules).toEqual([{ index: 0, change: "added" }]);
    expect(await huddle()).toEqual(before);
    // The content text carries the same answer, for clients that read only text.
    expect(JSON.parse(reply.text).changeRequest.id).toBe(id);

    const listed = await mcp.call("list_change_requests", { appId: keys.app.id, environmentId: keys.production.id, state: "open" });
    expect(listed.value.changeRequests).toEqual([expect.objectContaining({ id, title: "Huddles for acme", state: "open", features: ["huddle"], createdBy: expect.objectContaining({ email: "agent-owner@example.com" }) })]);

    // The author cannot approve it; another editor does, and the author applies it.
    expect((await asSession(server.url, author, "POST", `${production()}/change-requests/${id}/reviews`, { decision: "approve" })).status).toBe(403);
    const approved = await asSession(server.url, reviewer, "POST", `${production()}/change-requests/${id}/reviews`, { decision: "approve", comment: "ok" });
    expect(approved.body.changeRequest.state).toBe("approved");
    expect((await asSession(server.url, author, "POST", `${production()}/change-requests/${id}/apply`, {})).status).toBe(200);

    const read = await mcp.call("get_change_request", { appId: keys.app.id, environmentId: keys.production.id, id });
    expect(read.value.changeRequest).toMatchObject({ id, state: "applied", approvals: [{ decision: "approve", comment: "ok" }] });
    const after = await huddle();
    expect(after).toEqual({ version: before.version + 1, rules: ACME_ONLY });
  });

  it("gives a default title when the call names none", async () => {
    const reply = await mcp.call("set_flag_targeting", { appId: keys.app.id, key: "huddle", environmentId: keys.production.id, enabled: false });
    expect(reply.isError, reply.text).toBe(false);
    expect(reply.value.changeRequest).toMatchObject({ title: "Set targeting of huddle", description: null, state: "open" });
  });

  it("answers bad input and unknown ids as isError results naming the field", async () => {
    const empty = await mcp.call("set_flag_targeting", { appId: keys.app.id, key: "huddle", environmentId: keys.production.id, enabled: true, title: "   " });
    expect(empty.isError).toBe(true);
    expect(empty.text).toMatch(/title: must not be empty/);
    const state = await mcp.call("list_change_requests", { appId: keys.app.id, environmentId: keys.production.id, state: "pending" });
    expect(state.isError).toBe(true);
    expect(state.text).toMatch(/state: must be one of open/);
    const missing = await mcp.call("get_change_request", { appId: keys.app.id, environmentId: keys.production.id, id: "cr_nothing" });
    expect(missing.isError).toBe(true);
    expect(missing.value.error.code).toBe("NOT_FOUND");
    expect(missing.text).toMatch(/^NOT_FOUND: id: no change request cr_nothing/);
    const elsewhere = await mcp.call("get_change_request", { appId: keys.app.id, environmentId: "env_unknown", id: "cr_nothing" });
    expect(elsewhere.text).toMatch(/environmentId/);
  });

  it("writes directly where the environment requires nothing", async () => {
    const reply = await mcp.call("set_flag_targeting", { appId: keys.app.id, key: "huddle", environmentId: keys.development.id, companyIds: ["acme"] });
    expect(reply.isError, reply.text).toBe(false);
    expect(reply.value).toMatchObject({ version: 1, rules: ACME_ONLY });
    expect(reply.value.proposed).toBeUndefined();
  });
});
