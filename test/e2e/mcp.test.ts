/**
 * Issue 21: the MCP endpoint over real HTTP on either twin, driven by the official SDK's client. A member's API token
 * lists the tools, creates a flag and targets two companies; the SDK-facing evaluation then answers accordingly, the
 * history, audit log and live stream show the change; a read-only token's writes are refused and change nothing; bad
 * inputs come back as isError results, and nothing answers 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, createMember, createToken, signIn } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { connectMcp, type McpSession } from "../support/mcp.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";
import { openSse } from "../support/sse.js";

const TOOL_NAMES = ["list_apps", "list_flags", "get_flag", "create_flag", "set_flag_targeting", "list_change_requests", "get_change_request", "flag_usage", "list_feedback", "start_rollout", "get_rollout"];

describe(`MCP endpoint (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  let writer: { id: string; secret: string };
  let reader: { id: string; secret: string };
  let mcp: McpSession;
  let readOnly: McpSession;
  const statuses: number[] = [];

  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const evaluated = async (companyId: string) => {
    const reply = await request(server.url, "GET", `/features/evaluated?context.company.id=${companyId}`, { token: keys.production.publishableKey });
    expect(reply.status).toBe(200);
    return reply.body.features as Record<string, { isEnabled: boolean; targetingVersion: number }>;
  };

  beforeAll(async () => {
    server = await startServer({ env: { ...ACCOUNT_TEST_ENV } });
    keys = await createApp(server.url, server.adminToken, "Agents");
    await createMember(server.url, server.adminToken, "dev@mcp.test", "editor");
    const session = await signIn(server.url, "dev@mcp.test");
    writer = await createToken(server.url, session, "cursor");
    reader = await createToken(server.url, session, "cursor (read-only)", true);
    // Every MCP HTTP exchange's status, to hold the "never a 5xx" promise over the whole suite.
    const realFetch = globalThis.fetch;
    globalThis.fetch = async (...args: Parameters<typeof fetch>) => {
      const response = await realFetch(...args);
      if (String(args[0] instanceof Request ? args[0].url : args[0]).includes("/api/mcp")) statuses.push(response.status);
      return response;
    };
    mcp = await connectMcp(`${server.url}/api/mcp`, { token: writer.secret });
    readOnly = await connectMcp(`${server.url}/api/mcp`, { token: reader.secret });
  });

  afterAll(async () => {
    await mcp?.close();
    await readOnly?.close();
    await server?.stop();
  });

  it("answers 401 with a Bearer challenge naming the protected-resource metadata without a credential", async () => {
    for (const headers of [{}, { authorization: "Bearer sya_not_a_real_token_0123456789" }]) {
      const response = await fetch(`${server.url}/api/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(response.status).toBe(401);
      const challenge = response.headers.get("www-authenticate") ?? "";
      expect(challenge).toMatch(/^Bearer /);
      expect(challenge).toContain(`resource_metadata="${server.url}/.well-known/oauth-protected-resource/api/mcp"`);
    }
  });

  it("takes the admin token too, refuses environment keys (403) and browser sessions (401)", async () => {
    const asAdmin = await connectMcp(`${server.url}/api/mcp`, { token: server.adminToken });
    expect((await asAdmin.call("list_apps")).isError).toBe(false);
    await asAdmin.close();
    const post = (headers: Record<string, string>) =>
      fetch(`${server.url}/api/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
    expect((await post({ authorization: `Bearer ${keys.production.secretKey}` })).status).toBe(403);
    const session = await signIn(server.url, "dev@mcp.test");
    expect((await post({ cookie: `switchyard_session=${session.cookie}`, "x-csrf-token": session.csrfToken })).status).toBe(401);
  });

  it("lists the tools, each with a JSON Schema for its input and a description", async () => {
    const { tools } = await mcp.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.description!.length).toBeGreaterThan(40);
    }
    const targeting = tools.find((tool) => tool.name === "set_flag_targeting")!;
    expect(Object.keys(targeting.inputSchema.properties!)).toEqual(expect.arrayContaining(["appId", "key", "environmentId", "enabled", "companyIds", "userIds", "rules"]));
    expect(targeting.inputSchema.required).toEqual(expect.arrayContaining(["appId", "key", "environmentId"]));
  });

  it("lists apps with their environments", async () => {
    const reply = await mcp.call("list_apps");
    expect(reply.isError).toBe(false);
    const app = reply.value.apps.find((candidate: { id: string }) => candidate.id === keys.app.id);
    expect(app.name).toBe("Agents");
    expect(app.environments).toEqual(
      expect.arrayContaining([
        { id: keys.production.id, name: "production", isProduction: true },
        { id: keys.development.id, name: "development", isProduction: false },
      ]),
    );
  });

  it("creates a flag and targets two companies: evaluation, history, audit and the live stream follow", async () => {
    const stream = await openSse(`${server.url}/sse/server`, { authorization: `Bearer ${keys.production.secretKey}` });
    try {
      await stream.waitFor((connection) => connection.versions().length > 0);
      const created = await mcp.call("create_flag", { appId: keys.app.id, key: "agent-huddle", name: "Agent huddle", description: "Made by an agent" });
      expect(created.isError, created.text).toBe(false);
      expect(created.value.flag).toMatchObject({ key: "agent-huddle", name: "Agent huddle", description: "Made by an agent", stage: null });
      expect(JSON.parse(created.text)).toEqual(created.value);

      const before = stream.versions().at(-1)!;
      const targeted = await mcp.call("set_flag_targeting", { appId: keys.app.id, key: "agent-huddle", environmentId: keys.production.id, companyIds: ["acme", "initech"] });
      expect(targeted.isError, targeted.text).toBe(false);
      expect(targeted.value.version).toBe(1);
      expect(targeted.value.flagStateVersion).toBeGreaterThan(before);
      await stream.waitFor((connection) => connection.versions().includes(targeted.value.flagStateVersion));
    } finally {
      stream.close();
    }

    expect((await evaluated("acme"))["agent-huddle"]).toMatchObject({ isEnabled: true, targetingVersion: 1 });
    expect((await evaluated("initech"))["agent-huddle"]).toMatchObject({ isEnabled: true, targetingVersion: 1 });
    expect((await evaluated("globex"))["agent-huddle"]).toMatchObject({ isEnabled: false, targetingVersion: 1 });

    const history = await admin("GET", `/admin/environments/${keys.production.id}/features/agent-huddle/history`);
    expect(history.body.versions).toHaveLength(1);
    expect(history.body.versions[0]).toMatchObject({ kind: "targeting", version: 1, actor: { kind: "token", id: writer.id } });
    expect(history.body.versions[0].rules).toEqual([{ filter: { type: "context", field: "company.id", operator: "ANY_OF", values: ["acme", "initech"] } }]);

    const audit = await admin("GET", "/admin/audit?limit=1000&order=oldest");
    const mine = audit.body.entries.filter((entry: { entity: { key?: string } }) => entry.entity.key === "agent-huddle");
    expect(mine.map((entry: { action: string }) => entry.action)).toEqual(["feature.create", "targeting.update"]);
    for (const entry of mine) expect(entry.actor).toMatchObject({ kind: "token", id: writer.id, email: "dev@mcp.test" });

    const flag = await mcp.call("get_flag", { appId: keys.app.id, key: "agent-huddle" });
    expect(flag.value.flag.environments).toEqual(
      expect.arrayContaining([
        { id: keys.production.id, name: "production", version: 1, rules: history.body.versions[0].rules, enabled: true },
        { id: keys.development.id, name: "development", version: 0, rules: [], enabled: true },
      ]),
    );
    const flags = await mcp.call("list_flags", { appId: keys.app.id });
    expect(flags.value.flags).toEqual([expect.objectContaining({ key: "agent-huddle", name: "Agent huddle", stale: false })]);
  });

  it("turns a flag on for everyone and off again", async () => {
    const on = await mcp.call("set_flag_targeting", { appId: keys.app.id, key: "agent-huddle", environmentId: keys.production.id, enabled: true });
    expect(on.value.version).toBe(2);
    expect((await evaluated("globex"))["agent-huddle"]!.isEnabled).toBe(true);
    const off = await mcp.call("set_flag_targeting", { appId: keys.app.id, key: "agent-huddle", environmentId: keys.production.id, enabled: false });
    expect(off.value).toMatchObject({ version: 3, rules: [] });
    expect((await evaluated("acme"))["agent-huddle"]!.isEnabled).toBe(false);
  });

  it("refuses a read-only token's writes and changes nothing; its reads work", async () => {
    const auditBefore = (await admin("GET", "/admin/audit?limit=1000")).body.entries.length;
    const create = await readOnly.call("create_flag", { appId: keys.app.id, key: "sneaky" });
    expect(create.isError).toBe(true);
    expect(create.text).toMatch(/^FORBIDDEN: A read-only token cannot do this/);
    const target = await readOnly.call("set_flag_targeting", { appId: keys.app.id, key: "agent-huddle", environmentId: keys.production.id, enabled: true });
    expect(target.isError).toBe(true);
    expect(target.value.error.code).toBe("FORBIDDEN");
    expect((await admin("GET", `/admin/apps/${keys.app.id}/features`)).body.features.map((feature: { key: string }) => feature.key)).toEqual(["agent-huddle"]);
    expect((await admin("GET", `/admin/environments/${keys.production.id}/features/agent-huddle/history`)).body.versions).toHaveLength(3);
    expect((await admin("GET", "/admin/audit?limit=1000")).body.entries.length).toBe(auditBefore);
    const read = await readOnly.call("get_flag", { appId: keys.app.id, key: "agent-huddle" });
    expect(read.isError).toBe(false);
  });

  it("answers bad inputs with isError results naming the field or the reason", async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["list_flags", { appId: "app_nope" }, /appId: no app app_nope/],
      ["list_flags", {}, /appId/],
      ["get_flag", { appId: keys.app.id, key: "missing" }, /key: no flag missing/],
      ["create_flag", { appId: keys.app.id, key: "" }, /key: must not be empty/],
      ["create_flag", { appId: keys.app.id, key: "bad\u0001key" }, /key: must not contain control characters/],
      ["create_flag", { appId: keys.app.id, key: 42 }, /key/],
      ["create_flag", { appId: keys.app.id, key: "agent-huddle" }, /CONFLICT: key: flag agent-huddle already exists/],
      ["create_flag", { appId: keys.app.id, key: "x", colour: "red" }, /colour/],
      ["set_flag_targeting", { appId: keys.app.id, key: "agent-huddle", environmentId: keys.production.id, companyIds: "acme" }, /companyIds/],
      ["set_flag_targeting", { appId: keys.app.id, key: "agent-huddle", environmentId: keys.production.id, enabled: "yes" }, /enabled: must be a boolean/],
      ["set_flag_targeting", { appId: keys.app.id, key: "agent-huddle", environmentId: keys.production.id }, /give enabled, companyIds, userIds or rules/],
      ["set_flag_targeting", { appId: keys.app.id, key: "agent-huddle", environmentId: keys.production.id, enabled: true, companyIds: ["a"] }, /enabled: cannot be combined/],
      ["set_flag_targeting", { appId: keys.app.id, key: "agent-huddle", environmentId: "env_nope", enabled: true }, /environmentId: no environment env_nope/],
      ["set_flag_targeting", { appId: keys.app.id, key: "agent-huddle", environmentId: keys.production.id, rules: [{ filter: { type: "magic" } }] }, /INVALID_RULES[\s\S]*rules\.0\.filter/],
      ["flag_usage", { appId: keys.app.id, key: "missing", environmentId: keys.production.id }, /key: no flag missing/],
      ["list_feedback", { appId: keys.app.id, environmentId: keys.development.id, key: 7 }, /key/],
      ["no_such_tool", {}, /No tool no_such_tool/],
    ];
    for (const [tool, args, message] of cases) {
      const reply = await mcp.call(tool, args);
      expect(reply.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(reply.text, `${tool} ${JSON.stringify(args)}`).toMatch(message);
    }
    expect((await admin("GET", `/admin/environments/${keys.production.id}/features/agent-huddle/history`)).body.versions).toHaveLength(3);
  });

  it("answers malformed HTTP with 4xx, never 5xx", async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/api/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${writer.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body,
      });
    for (const response of [
      await post("{not json"),
      await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_apps" } })),
      await post(JSON.stringify({ hello: "world" })),
      await post("[]"),
      await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { accept: "text/html" }),
      await post("{}", { "content-type": "text/plain" }),
      await fetch(`${server.url}/api/mcp`, { headers: { authorization: `Bearer ${writer.secret}`, accept: "text/event-stream" } }),
      await fetch(`${server.url}/api/mcp`, { method: "DELETE", headers: { authorization: `Bearer ${writer.secret}` } }),
    ]) {
      expect(response.status).toBeGreaterThanOrEqual(200);
      expect(response.status).toBeLessThan(500);
    }
  });

  it("reports usage and feedback", async () => {
    const feedback = await request(server.url, "POST", "/feedback", {
      token: keys.production.publishableKey,
      body: { userId: "u1", companyId: "acme", key: "agent-huddle", score: 5, comment: "Lovely" },
    });
    expect(feedback.status).toBe(200);
    const listed = await mcp.call("list_feedback", { appId: keys.app.id, environmentId: keys.production.id, key: "agent-huddle" });
    expect(listed.value.feedback).toEqual([expect.objectContaining({ feedbackId: feedback.body.feedbackId, key: "agent-huddle", score: 5, comment: "Lovely", companyId: "acme" })]);
    const usage = await mcp.call("flag_usage", { appId: keys.app.id, key: "agent-huddle", environmentId: keys.production.id });
    expect(usage.isError, usage.text).toBe(false);
    expect(usage.value).toMatchObject({ key: "agent-huddle", satisfaction: expect.anything(), companies: expect.objectContaining({ none: expect.any(Number) }) });
  });

  it("never answered an MCP request with a 5xx", () => {
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((status) => status >= 500)).toEqual([]);
  });
});
