/**
 * Webhook deliveries survive kill -9 (API.md §16): deliveries are queued in the same commit as the change (or, for
 * feedback, the projection) that causes them, so a service killed while a delivery hangs at its receiver, with
 * more queued behind it and a feedback acknowledged but maybe not yet projected, sends every one of them after a
 * restart, in order, each with the webhook-id it had before the crash.
 */
import { rmSync } from "node:fs";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { makeDataDir, NATIVE_MODE, startServer, type TestServer } from "../support/server.js";
import { startReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const ENV = { SWITCHYARD_WEBHOOK_ALLOW: "127.0.0.1/32", SWITCHYARD_WEBHOOK_RETRY_BASE_MS: "100" };

describe(`webhook deliveries across kill -9 (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  const dataDir = makeDataDir();
  let server: TestServer | undefined;
  let sink: WebhookReceiver | undefined;
  afterAll(async () => {
    await server?.stop();
    await sink?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("sends what was queued before the crash after the restart, in order, with the same webhook-ids", { timeout: 60_000 }, async () => {
    sink = await startReceiver();
    sink.answer = () => "hang";
    // A long attempt timeout: the first delivery is still hanging when the service is killed.
    server = await startServer({ dataDir, keepData: true, env: { ...ENV, SWITCHYARD_WEBHOOK_TIMEOUT_MS: "30000" } });
    const keys = await createApp(server.url, server.adminToken);
    const admin = (method: string, path: string, body?: unknown) => request(server!.url, method, path, { token: server!.adminToken, ...(body !== undefined ? { body } : {}) });
    const created = await admin("POST", `/admin/apps/${keys.app.id}/webhooks`, { url: sink.url, events: ["targeting.changed", "feedback.created"] });
    expect(created.status).toBe(200);
    const secret = created.body.secret as string;
    await admin("PUT", `/admin/apps/${keys.app.id}/features/crashy`, {});
    const versions = [1, 2, 3].map((n) => [{ filter: { type: "context", field: "user.id", operator: "IS", values: [`u${n}`] } }]);
    for (const rules of versions) expect((await admin("PUT", `/admin/environments/${keys.production.id}/features/crashy/targeting`, { rules })).status).toBe(200);
    const feedback = await request(server.url, "POST", "/feedback", { token: keys.production.publishableKey, body: { userId: "u9", key: "crashy", score: 5 } });
    expect(feedback.status).toBe(200);
    const [hung] = await sink.waitFor(1);
    await server.kill();
    server = undefined;

    sink.answer = () => ({ status: 200 });
    server = await startServer({ dataDir, keepData: true, env: { ...ENV, SWITCHYARD_WEBHOOK_TIMEOUT_MS: "2000" } });
    const received = await sink.waitFor(5, 20_000);
    const events = received.map((each) => new Webhook(secret).verify(each.body, each.headers) as { type: string; data: { after: unknown } });
    const ids = received.map((each) => each.headers["webhook-id"]);
    // The hung delivery is sent again with its id (at least once), then the rest in the order they were queued.
    expect(ids[1]).toBe(hung!.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(4);
    expect(events.slice(1).map((event) => event.type)).toEqual(["targeting.changed", "targeting.changed", "targeting.changed", "feedback.created"]);
    expect(events.slice(1, 4).map((event) => event.data.after)).toEqual(versions);
    expect(events[4]!.data.after).toMatchObject({ feedbackId: feedback.body.feedbackId, score: 5 });
  });
});
