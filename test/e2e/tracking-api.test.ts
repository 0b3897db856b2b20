import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";

describe("tracking API over HTTP", () => {
  let server: TestServer;
  let admin: string;
  let keys: Awaited<ReturnType<typeof createApp>>;
  const adminGet = (path: string) => request(server.url, "GET", path, { token: admin });
  const post = (path: string, body: unknown, token = keys.production.publishableKey) => request(server.url, "POST", path, { token, body });

  beforeAll(async () => {
    server = await startServer();
    admin = server.adminToken;
    keys = await createApp(server.url, admin);
    await request(server.url, "PUT", `/admin/apps/${keys.app.id}/features/huddle`, { token: admin, body: {} });
  });
  afterAll(async () => {
    await server.stop();
  });

  it("upserts users and companies with merged attributes and numeric ids stored as strings", async () => {
    const environment = keys.production.id;
    expect((await post("/user", { userId: 42, attributes: { name: "Ada", plan: "free" } })).body).toEqual({ success: true });
    expect((await post("/user", { userId: "42", attributes: { plan: "pro" } })).status).toBe(200);
    const user = await adminGet(`/admin/environments/${environment}/users/42`);
    expect(user.body.user).toMatchObject({ id: "42", attributes: { name: "Ada", plan: "pro" } });
    expect(typeof user.body.user.firstSeen).toBe("string");

    expect((await post("/company", { companyId: 7, userId: 42, attributes: { tier: "gold" } })).status).toBe(200);
    const company = await adminGet(`/admin/environments/${environment}/companies/7`);
    expect(company.body.company).toMatchObject({ id: "7", attributes: { tier: "gold" }, userIds: ["42"] });
    expect((await adminGet(`/admin/environments/${environment}/users/42`)).body.user.companyIds).toEqual(["7"]);
    expect((await adminGet(`/admin/environments/${environment}/users/nobody`)).status).toBe(404);
  });

  it("leaves lastSeen alone when context.active is false but still stores attributes", async () => {
    const environment = keys.production.id;
    await post("/user", { userId: "quiet", timestamp: "2026-01-01T00:00:00.000Z" });
    await post("/user", { userId: "quiet", attributes: { x: 1 }, timestamp: "2026-02-01T00:00:00.000Z", context: { active: false } });
    const user = (await adminGet(`/admin/environments/${environment}/users/quiet`)).body.user;
    expect(user.lastSeen).toBe("2026-01-01T00:00:00.000Z");
    expect(user.attributes).toEqual({ x: 1 });
    const bad = await post("/user", { userId: "quiet", context: { active: "no" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.validationErrors[0].path).toBe("context.active");
  });

  it("appends events in order and pages them with a cursor", async () => {
    const { development } = keys;
    for (let index = 0; index < 5; index++) {
      expect((await post("/event", { event: `e${index}`, userId: "u1", attributes: { index } }, development.secretKey)).status).toBe(200);
    }
    const first = await adminGet(`/admin/environments/${development.id}/events?limit=2`);
    expect(first.body.events.map((event: { event: string }) => event.event)).toEqual(["e0", "e1"]);
    const rest = await adminGet(`/admin/environments/${development.id}/events?after=${first.body.next}&limit=10`);
    expect(rest.body.events.map((event: { event: string }) => event.event)).toEqual(["e2", "e3", "e4"]);
    const caughtUp = await adminGet(`/admin/environments/${development.id}/events?after=${rest.body.next}`);
    expect(caughtUp.body).toMatchObject({ events: [], next: rest.body.next });
  });

  it("stores a bulk request all or nothing, naming every bad item", async () => {
    const environment = keys.production.id;
    const good = Array.from({ length: 50 }, (_, index) => ({ type: "event", event: "bulk-ok", userId: `b${index}` }));
    const bad = [...good];
    bad.splice(10, 0, { type: "event", event: "", userId: "x" } as never);
    bad.splice(30, 0, { type: "nonsense" } as never);
    const rejected = await post("/bulk", bad);
    expect(rejected.status).toBe(400);
    const paths = rejected.body.error.validationErrors.map((issue: { path: string }) => issue.path);
    expect(paths).toContain("10.event");
    expect(paths.some((path: string) => path.startsWith("30"))).toBe(true);
    const before = (await adminGet(`/admin/environments/${environment}/events?limit=1000`)).body.events.filter((event: { event: string }) => event.event === "bulk-ok");
    expect(before).toHaveLength(0);
    expect((await post("/bulk", good)).status).toBe(200);
    const after = (await adminGet(`/admin/environments/${environment}/events?limit=1000`)).body.events.filter((event: { event: string }) => event.event === "bulk-ok");
    expect(after).toHaveLength(50);
  });

  it("upserts feedback by feedbackId and rejects unknown features and ids", async () => {
    const environment = keys.production.id;
    const created = await post("/feedback", { userId: "f1", key: "huddle", score: 4 });
    expect(created.status).toBe(200);
    expect(typeof created.body.feedbackId).toBe("string");
    const updated = await post("/feedback", { userId: "f1", key: "huddle", feedbackId: created.body.feedbackId, comment: "Nice" });
    expect(updated.body.feedbackId).toBe(created.body.feedbackId);
    const listed = (await adminGet(`/admin/environments/${environment}/feedback`)).body.feedback;
    const mine = listed.filter((entry: { feedbackId: string }) => entry.feedbackId === created.body.feedbackId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ score: 4, comment: "Nice", key: "huddle" });
    expect((await post("/feedback", { userId: "f1", key: "nope", score: 1 })).status).toBe(400);
    expect((await post("/feedback", { userId: "f1", key: "huddle", feedbackId: "fb_unknown", score: 2 })).status).toBe(404);
    expect((await post("/feedback", { userId: "f1", key: "huddle" })).status).toBe(400);
  });

  it("accepts feature events one at a time or as an array, nested or flattened context", async () => {
    const environment = keys.production.id;
    expect((await post("/features/events", { action: "check", key: "huddle", evalResult: true, evalContext: { user: { id: "1" } } })).status).toBe(200);
    expect(
      (await post("/features/events", [
        { action: "evaluate", key: "huddle", evalResult: false, evalContext: { "user.id": "2", meta: { source: "x" } } },
        { action: "evaluate-config", key: "huddle", evalResult: { key: "blue", payload: null } },
      ])).status,
    ).toBe(200);
    const events = (await adminGet(`/admin/environments/${environment}/feature-events`)).body.featureEvents;
    expect(events.map((event: { action: string }) => event.action)).toEqual(["check", "evaluate", "evaluate-config"]);
    const bad = await post("/features/events", [{ action: "check", key: "huddle", evalResult: true }, { action: "check", key: "huddle" }]);
    expect(bad.status).toBe(400);
    expect(bad.body.error.validationErrors[0].path).toBe("1.evalResult");
  });

  it("stores /features/enabled's evaluate events before answering, with evaluations of the same moment beside them", async () => {
    // The test server runs one worker: both kinds of request go through the pool, those that commit in batches of
    // their own (src/serving/workers/pool-executor.ts), and each enabled answer must find its events stored the moment it arrives.
    const { production } = keys;
    const put = await request(server.url, "PUT", `/admin/environments/${production.id}/features/huddle/targeting`, { token: admin, body: { rules: [{ filter: { type: "constant", value: true } }] } });
    expect(put.status).toBe(200);
    const users = Array.from({ length: 24 }, (_, index) => `enabled-${index}`);
    const answers = await Promise.all(
      users.flatMap((user) => [
        request(server.url, "GET", `/features/enabled?context.user.id=${user}`, { token: production.publishableKey }),
        request(server.url, "GET", `/features/evaluated?context.user.id=${user}-evaluated`, { token: production.publishableKey }),
      ]),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.features.huddle.isEnabled).toBe(true);
    }
    const events = (await adminGet(`/admin/environments/${production.id}/feature-events?limit=1000`)).body.featureEvents as { action: string; key: string; evalContext?: { user?: { id?: string } } }[];
    const recorded = new Set(events.filter((event) => event.action === "evaluate" && event.key === "huddle").map((event) => event.evalContext?.user?.id));
    for (const user of users) expect(recorded.has(user), user).toBe(true);
    // /features/evaluated records nothing.
    expect([...recorded].filter((user) => user?.endsWith("-evaluated"))).toEqual([]);
  });

  it("takes the tracking API with the tracking key in the path, into the default environment", async () => {
    const reply = await request(server.url, "POST", `/${keys.app.trackingKey}/event`, { body: { event: "via-tracking-key", userId: "t1" } });
    expect(reply.status).toBe(200);
    const events = (await adminGet(`/admin/environments/${keys.app.defaultEnvironmentId}/events?limit=1000`)).body.events;
    expect(events.some((event: { event: string }) => event.event === "via-tracking-key")).toBe(true);
    expect((await request(server.url, "POST", "/trk_unknownunknownunknownunknown12/event", { body: { event: "x", userId: "t1" } })).status).toBe(401);
    expect((await request(server.url, "POST", `/${keys.production.publishableKey}/event`, { body: { event: "x", userId: "t1" } })).status).toBe(403);
    expect((await request(server.url, "POST", "/event", { token: keys.app.trackingKey, body: { event: "x", userId: "t1" } })).status).toBe(403);
  });

  it("answers bad bodies with the envelope", async () => {
    const token = keys.production.publishableKey;
    const wrongType = await request(server.url, "POST", "/event", { token, rawBody: '{"event":"a","userId":"b"}', contentType: "text/plain" });
    expect(wrongType.body.error.code).toBe("UNSUPPORTED_CONTENT_TYPE");
    const malformed = await request(server.url, "POST", "/event", { token, rawBody: "{nope", contentType: "application/json" });
    expect(malformed.body.error.code).toBe("MALFORMED_JSON");
    const oversize = await request(server.url, "POST", "/event", { token, body: { event: "a", userId: "b", attributes: { blob: "x".repeat(70 * 1024) } } });
    expect(oversize.status).toBe(413);
    const bulkOversize = await request(server.url, "POST", "/bulk", { token, rawBody: "[" + '"x",'.repeat(600_000) + '"x"]', contentType: "application/json" });
    expect(bulkOversize.status).toBe(413);
    const protoAttribute = await request(server.url, "POST", "/user", { token, rawBody: '{"userId":"p","attributes":{"__proto__":{"polluted":true}}}', contentType: "application/json" });
    expect(protoAttribute.status).toBe(400);
    const noKey = await request(server.url, "POST", "/event", { body: { event: "a", userId: "b" } });
    expect(noKey.status).toBe(401);
  });
});
