/**
 * OFREP over raw HTTP (API.md §14): the answers' shape, reasons and metadata, the context mapping and remote context,
 * every error case with OFREP's bodies, CORS, ETag revalidation, the event stream and the `check` events.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "../support/http.js";
import { openSse } from "../support/sse.js";
import { startServer, type TestServer } from "../support/server.js";
import { adminCall, createFixtureApp, eventually, listAll, type AppFixture } from "../sdk/fixtures.js";

const BULK = "/ofrep/v1/evaluate/flags";
const flagPath = (key: string) => `${BULK}/${encodeURIComponent(key)}`;

interface Flag {
  key: string;
  value?: unknown;
  reason: string;
  variant?: string;
  metadata: Record<string, unknown>;
}

describe("OFREP endpoints", () => {
  let server: TestServer;
  let fixture: AppFixture;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    request(server.url, "POST", path, { body, headers: { authorization: `Bearer ${fixture.publishableKey}`, ...headers } });

  beforeAll(async () => {
    server = await startServer();
    fixture = await createFixtureApp(server.url, server.adminToken, "OFREP");
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("answers every feature as an access flag, and a config flag for those with variants", async () => {
    fixture.flagStateVersion = (await request(server.url, "GET", "/features/evaluated", { token: fixture.publishableKey })).body.flagStateVersion;
    const reply = await post(BULK, { context: { targetingKey: "u-1", company: { id: "c-1", plan: "enterprise" } } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toContain("application/json");
    const flags = reply.body.flags as Flag[];
    const keys = flags.map((flag) => flag.key);
    expect(keys).toContain("always-on");
    expect(keys).toContain("always-on:config");
    expect(keys).toContain("untargeted");
    expect(keys).not.toContain("untargeted:config");
    const byKey = Object.fromEntries(flags.map((flag) => [flag.key, flag]));
    expect(byKey["always-on"]).toEqual({ key: "always-on", value: true, reason: "STATIC", variant: "on", metadata: { targetingVersion: 1, flagStateVersion: fixture.flagStateVersion, configKey: "v1" } });
    expect(byKey["always-on:config"]).toEqual({ key: "always-on:config", value: { n: 1 }, reason: "STATIC", variant: "v1", metadata: { targetingVersion: 1, flagStateVersion: fixture.flagStateVersion } });
    expect(byKey["enterprise-plan"]).toMatchObject({ value: true, reason: "TARGETING_MATCH", variant: "on", metadata: { configKey: "gold" } });
    expect(byKey["enterprise-plan:config"]).toMatchObject({ value: { seats: 100 }, reason: "TARGETING_MATCH", variant: "gold" });
    expect(byKey["untargeted"]).toEqual({ key: "untargeted", value: false, reason: "DEFAULT", variant: "off", metadata: { targetingVersion: 0, flagStateVersion: fixture.flagStateVersion } });
    // No variant matched: no value, so the caller's default applies.
    expect(byKey["small-companies:config"]).toEqual({ key: "small-companies:config", reason: "DEFAULT", metadata: { targetingVersion: 1, flagStateVersion: fixture.flagStateVersion } });
    expect(reply.body.eventStreams).toEqual([{ type: "sse", endpoint: { requestUri: `/ofrep/v1/events?publishableKey=${fixture.publishableKey}` } }]);
    expect(reply.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]+"$/);
  });

  it("reports SPLIT when the deciding rule holds a rollout, and answers the same as /features/evaluated", async () => {
    for (let index = 0; index < 40; index++) {
      const context = { targetingKey: `split-${index}`, company: { id: `c-${index}`, tier: 3 } };
      const flag = (await post(flagPath("user-rollout"), { context })).body as Flag;
      const evaluated = await request(server.url, "GET", `/features/evaluated?context.user.id=split-${index}&context.company.id=c-${index}&context.company.tier=3`, { token: fixture.publishableKey });
      const item = evaluated.body.features["user-rollout"];
      expect(flag.value).toBe(item.isEnabled);
      expect(flag.reason).toBe(item.isEnabled ? "SPLIT" : "DEFAULT");
      expect(flag.variant).toBe(item.isEnabled ? "on" : "off");
      const tier = (await post(flagPath("company-rollout-tier"), { context })).body as Flag;
      expect(tier.reason).toBe(evaluated.body.features["company-rollout-tier"].isEnabled ? "SPLIT" : "DEFAULT");
    }
  });

  it("maps targetingKey, companyId and top-level attributes, the explicit forms winning", async () => {
    expect((await post(flagPath("multi-rule"), { context: { targetingKey: "vip-1", role: "admin" } })).body).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
    // user.id wins over targetingKey.
    expect((await post(flagPath("multi-rule"), { context: { targetingKey: "vip-1", user: { id: "other", role: "admin" }, companyId: "x" } })).body.value).toBe(
      (await request(server.url, "GET", `/features/evaluated?context.user.id=other&context.user.role=admin&context.company.id=x&key=multi-rule`, { token: fixture.publishableKey })).body.features["multi-rule"].isEnabled,
    );
    // A top-level attribute is the user's: role "guest" turns email-or-not-guest off without an email.
    expect((await post(flagPath("email-or-not-guest"), { context: { targetingKey: "g", role: "guest" } })).body.value).toBe(false);
    expect((await post(flagPath("email-or-not-guest"), { context: { targetingKey: "g", role: "guest", user: { role: "owner" } } })).body.value).toBe(true);
    // companyId is the company's id; company attributes come from `company`.
    const numbers = await post(flagPath("enterprise-plan"), { context: { targetingKey: 7, companyId: 12, company: { plan: "business" } } });
    expect(numbers.body).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
    expect((await post(flagPath("beta-web"), { context: { targetingKey: "b", beta: true, other: { platform: "web" } } })).body.value).toBe(true);
  });

  it("completes the context with stored attributes (remote context)", async () => {
    expect((await post(flagPath("enterprise-plan"), { context: { targetingKey: "u-r", companyId: "stored-co" } })).body.value).toBe(false);
    const tracked = await request(server.url, "POST", "/company", { token: fixture.publishableKey, body: { companyId: "stored-co", attributes: { plan: "enterprise" } } });
    expect(tracked.status).toBe(200);
    await eventually(async () => (await post(flagPath("enterprise-plan"), { context: { targetingKey: "u-r", companyId: "stored-co" } })).body.value === true);
    // What the request sends wins over what is stored.
    expect((await post(flagPath("enterprise-plan"), { context: { companyId: "stored-co", company: { plan: "free" } } })).body.value).toBe(false);
  });

  it("takes the key as Bearer or X-API-Key, publishable or secret; eventStreams only for a publishable key", async () => {
    const secret = await request(server.url, "POST", BULK, { body: { context: {} }, headers: { "x-api-key": fixture.secretKey } });
    expect(secret.status).toBe(200);
    expect(secret.body.eventStreams).toBeUndefined();
    const viaApiKey = await request(server.url, "POST", flagPath("always-on"), { body: {}, headers: { "x-api-key": fixture.publishableKey } });
    expect(viaApiKey.body).toMatchObject({ key: "always-on", value: true });
    const bearerSecret = await request(server.url, "POST", flagPath("always-on"), { body: {}, token: fixture.secretKey });
    expect(bearerSecret.status).toBe(200);
  });

  it("answers OFREP's error bodies with the contract's statuses", async () => {
    const expectError = async (reply: Promise<{ status: number; body: Record<string, unknown> }>, status: number, errorCode: string, key?: string) => {
      const answer = await reply;
      expect(answer.status).toBe(status);
      expect(answer.body.errorCode).toBe(errorCode);
      expect(typeof answer.body.errorDetails).toBe("string");
      if (key !== undefined) expect(answer.body.key).toBe(key);
      else expect(answer.body.key).toBeUndefined();
    };
    const raw = (path: string, rawBody: string, headers: Record<string, string> = { authorization: `Bearer ${fixture.publishableKey}` }, contentType = "application/json") =>
      request(server.url, "POST", path, { rawBody, contentType, headers });
    await expectError(raw(BULK, "{not json"), 400, "PARSE_ERROR");
    await expectError(raw(flagPath("always-on"), "{not json"), 400, "PARSE_ERROR", "always-on");
    await expectError(raw(BULK, "[1,2]"), 400, "PARSE_ERROR");
    await expectError(raw(BULK, '{"context":{}}', undefined, "text/plain"), 400, "PARSE_ERROR");
    await expectError(raw(BULK, '{"context":{"user":{"__proto__":{"x":1}}}}'), 400, "PARSE_ERROR");
    await expectError(post(BULK, { context: "alice" }), 400, "INVALID_CONTEXT");
    await expectError(post(flagPath("always-on"), { context: [1] }), 400, "INVALID_CONTEXT", "always-on");
    await expectError(post(BULK, { context: { user: "alice" } }), 400, "INVALID_CONTEXT");
    await expectError(post(BULK, { context: { targetingKey: { id: 1 } } }), 400, "INVALID_CONTEXT");
    await expectError(post(flagPath("no-such-flag"), { context: {} }), 404, "FLAG_NOT_FOUND", "no-such-flag");
    await expectError(post(flagPath("untargeted:config"), { context: {} }), 404, "FLAG_NOT_FOUND", "untargeted:config");
    await expectError(raw(BULK, "{}", {}), 401, "GENERAL");
    await expectError(raw(flagPath("always-on"), "{}", {}), 401, "GENERAL", "always-on");
    await expectError(raw(BULK, "{}", { authorization: "Bearer pub_nope_0123456789abcdefghijklmnopqrstuv" }), 401, "GENERAL");
    await expectError(raw(BULK, "{}", { "x-api-key": fixture.trackingKey }), 403, "GENERAL");
    await expectError(raw(BULK, "{}", { authorization: `Bearer ${server.adminToken}` }), 403, "GENERAL");
    await expectError(request(server.url, "POST", `${BULK}?publishableKey=${fixture.secretKey}`, { body: {} }), 403, "GENERAL");
    const big = JSON.stringify({ context: { targetingKey: "x", blob: "y".repeat(70_000) } });
    await expectError(raw(BULK, big), 413, "GENERAL");
    await expectError(raw(flagPath("always-on"), big), 413, "GENERAL", "always-on");
  });

  it("lets a feature named <key>:config win over the config flag of <key>", async () => {
    await adminCall(server.url, server.adminToken, "PUT", `/admin/apps/${fixture.appId}/features/${encodeURIComponent("always-on:config")}`, { description: "own" });
    try {
      const own = await post(flagPath("always-on:config"), {});
      expect(own.body).toMatchObject({ key: "always-on:config", value: false, variant: "off", reason: "DEFAULT" });
      const flags = (await post(BULK, {})).body.flags as Flag[];
      expect(flags.filter((flag) => flag.key === "always-on:config")).toEqual([own.body]);
    } finally {
      await adminCall(server.url, server.adminToken, "DELETE", `/admin/apps/${fixture.appId}/features/${encodeURIComponent("always-on:config")}`);
    }
    expect((await post(flagPath("always-on:config"), {})).body).toMatchObject({ value: { n: 1 }, variant: "v1" });
  });

  it("counts opt-ins: a feature its rules leave off is on for a user who opted in (TARGETING_MATCH)", async () => {
    await adminCall(server.url, server.adminToken, "PUT", `/admin/apps/${fixture.appId}/features/labs`, { description: "Labs", optInEnabled: true });
    expect((await post(flagPath("labs"), { context: { targetingKey: "opt-user" } })).body).toMatchObject({ value: false, reason: "DEFAULT" });
    const optIn = await request(server.url, "POST", "/flags/opt-in", { token: fixture.publishableKey, body: { key: "labs", optedIn: true, scope: "user", context: { user: { id: "opt-user" } } } });
    expect(optIn.status).toBe(200);
    await eventually(async () => (await post(flagPath("labs"), { context: { targetingKey: "opt-user" } })).body.value === true);
    expect((await post(flagPath("labs"), { context: { targetingKey: "opt-user" } })).body).toMatchObject({ value: true, reason: "TARGETING_MATCH", variant: "on" });
    expect((await post(flagPath("labs"), { context: { targetingKey: "someone-else" } })).body.value).toBe(false);
    const evaluated = await request(server.url, "GET", "/features/evaluated?context.user.id=opt-user&key=labs", { token: fixture.publishableKey });
    expect(evaluated.body.features.labs.isEnabled).toBe(true);
  });

  it("answers a feature the kill switch holds off with reason DISABLED, its config flag as before, and back on as before", async () => {
    const killSwitch = (enabled: boolean) => adminCall(server.url, server.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/always-on/enabled`, { enabled });
    const context = { context: { targetingKey: "kill-user" } };
    const before = (await post(BULK, context)).body.flags as Flag[];
    await killSwitch(false);
    try {
      const flag = (await post(flagPath("always-on"), context)).body as Flag;
      expect(flag).toMatchObject({ key: "always-on", value: false, reason: "DISABLED", variant: "off" });
      const flags = (await post(BULK, context)).body.flags as Flag[];
      expect(flags.find((entry) => entry.key === "always-on")).toMatchObject({ value: false, reason: "DISABLED", variant: "off" });
      // The kill switch holds access off; the remote config is evaluated as before.
      expect(flags.find((entry) => entry.key === "always-on:config")).toMatchObject({ value: { n: 1 }, reason: "STATIC", variant: "v1" });
      // Features the switch does not hold keep their reasons.
      expect(flags.find((entry) => entry.key === "untargeted")).toMatchObject({ value: false, reason: "DEFAULT" });
      const evaluated = await request(server.url, "GET", "/features/evaluated?context.user.id=kill-user&key=always-on", { token: fixture.publishableKey });
      expect(evaluated.body.features["always-on"].isEnabled).toBe(false);
    } finally {
      await killSwitch(true);
    }
    const after = (await post(BULK, context)).body.flags as Flag[];
    const strip = (flags: Flag[]) => flags.map(({ metadata: { flagStateVersion: _version, ...metadata }, ...flag }) => ({ ...flag, metadata }));
    expect(strip(after)).toEqual(strip(before));
    expect(after.find((entry) => entry.key === "always-on")).toMatchObject({ value: true, reason: "STATIC" });
  });

  it("archived features are not found", async () => {
    await adminCall(server.url, server.adminToken, "PUT", `/admin/apps/${fixture.appId}/features/to-archive`, { description: "x" });
    expect((await post(flagPath("to-archive"), {})).status).toBe(200);
    await adminCall(server.url, server.adminToken, "DELETE", `/admin/apps/${fixture.appId}/features/to-archive`);
    expect((await post(flagPath("to-archive"), {})).status).toBe(404);
  });

  it("answers CORS preflights with the OFREP headers and exposes the ETag", async () => {
    const preflight = await fetch(server.url + BULK, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "x-api-key, if-none-match, content-type" },
    });
    expect(preflight.status).toBe(204);
    const allowed = preflight.headers.get("access-control-allow-headers")!;
    for (const header of ["x-api-key", "if-none-match", "content-type", "authorization"]) expect(allowed).toContain(header);
    const answer = await post(BULK, {}, { origin: "https://app.example" });
    expect(answer.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(answer.headers.get("access-control-expose-headers")).toMatch(/etag/i);
  });

  it("answers 304 to a current If-None-Match, and a new ETag after a change or for another context", async () => {
    const body = { context: { targetingKey: "etag-user", company: { id: "etag-co", plan: "free" } } };
    const first = await post(`${BULK}?flagConfigEtag=abc&unknown=1`, body);
    const etag = first.headers.get("etag")!;
    expect(first.status).toBe(200);
    expect((await post(BULK, body)).headers.get("etag")).toBe(etag);
    const revalidated = await fetch(server.url + BULK, {
      method: "POST",
      headers: { authorization: `Bearer ${fixture.publishableKey}`, "content-type": "application/json", "if-none-match": etag },
      body: JSON.stringify(body),
    });
    expect(revalidated.status).toBe(304);
    expect(await revalidated.text()).toBe("");
    expect(revalidated.headers.get("etag")).toBe(etag);
    const otherContext = await post(BULK, { context: { targetingKey: "etag-user", company: { id: "etag-co", plan: "enterprise" } } }, { "if-none-match": etag });
    expect(otherContext.status).toBe(200);
    expect(otherContext.headers.get("etag")).not.toBe(etag);
    await adminCall(server.url, server.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/untargeted/targeting`, { rules: [{ filter: { type: "constant", value: true } }] });
    const changed = await post(BULK, body, { "if-none-match": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(etag);
    expect((changed.body.flags as Flag[]).find((flag) => flag.key === "untargeted")).toMatchObject({ value: true, reason: "STATIC" });
    await adminCall(server.url, server.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/untargeted/targeting`, { rules: [] });
  });

  it("streams refetchEvaluation on every change, to a publishable key in the query", async () => {
    const before = (await request(server.url, "GET", "/features/evaluated", { token: fixture.publishableKey })).body.flagStateVersion;
    const stream = await openSse(`${server.url}/ofrep/v1/events?publishableKey=${fixture.publishableKey}&extra=ignored`);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toContain("text/event-stream");
      await stream.waitFor((connection) => connection.frames().some((frame) => frame.startsWith("data: ")));
      const first = JSON.parse(stream.frames().find((frame) => frame.startsWith("data: "))!.slice(6));
      expect(first.type).toBe("refetchEvaluation");
      expect(first.etag).toBe(String(before));
      const reply = await adminCall(server.url, server.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/untargeted/targeting`, { rules: [{ filter: { type: "constant", value: false } }] });
      await stream.waitFor((connection) => connection.frames().some((frame) => frame === `data: {"type":"refetchEvaluation","etag":"${reply.flagStateVersion}"}`));
      // One constant filter is STATIC whatever its value.
      expect((await post(flagPath("untargeted"), {})).body).toMatchObject({ value: false, reason: "STATIC", variant: "off" });
    } finally {
      stream.close();
    }
    const refused = await openSse(`${server.url}/ofrep/v1/events`);
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.text() || (await refused.ended.then(() => refused.text())))).toMatchObject({ errorCode: "GENERAL" });
  });

  it("records a check event for a single-flag evaluation, none for the bulk one", async () => {
    const eventsOf = async (userId: string) =>
      (await listAll(server.url, server.adminToken, fixture.environmentId, "feature-events", "featureEvents")).filter((event) => JSON.stringify(event).includes(userId));
    await post(BULK, { context: { targetingKey: "bulk-only-user" } });
    await post(flagPath("enterprise-plan"), { context: { targetingKey: "check-user", companyId: "check-co", company: { plan: "enterprise" } } });
    await post(flagPath("enterprise-plan:config"), { context: { targetingKey: "check-user", company: { id: "check-co", plan: "enterprise" } } });
    const events = await eventually(async () => {
      const found = await eventsOf("check-user");
      return found.length >= 2 ? found : undefined;
    });
    expect(events.map((event) => event.action).sort()).toEqual(["check", "check-config"]);
    const check = events.find((event) => event.action === "check")!;
    expect(check).toMatchObject({ key: "enterprise-plan", evalResult: true });
    // The bulk call is answered by now and the check events above were logged after it: none of its own appeared.
    expect(await eventsOf("bulk-only-user")).toEqual([]);
  });
});
