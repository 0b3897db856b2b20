/**
 * Webhooks (API.md §16) end to end on a standalone service: real receivers on 127.0.0.1 (allowed through
 * SWITCHYARD_WEBHOOK_ALLOW), signatures checked with the `standardwebhooks` package, order, retries, timeouts,
 * redirects, disabling, deleting, rotation, test events, redelivery and feedback. The attempt timeout and the retry
 * base are shortened so that nothing waits for long; nothing is sent anywhere but 127.0.0.1.
 */
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, createMember, createToken, signIn } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";
import { startReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const EVERYONE = [{ filter: { type: "constant", value: true } }];
const NOBODY = [{ filter: { type: "constant", value: false } }];

describe(`webhooks (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  const receivers: WebhookReceiver[] = [];
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const hooks = () => `/admin/apps/${keys.app.id}/webhooks`;
  const receiver = async () => {
    const started = await startReceiver();
    receivers.push(started);
    return started;
  };
  const create = async (body: Record<string, unknown>) => {
    const reply = await admin("POST", hooks(), body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body as { webhook: { id: string }; secret: string };
  };
  const deliveries = async (id: string) => (await admin("GET", `${hooks()}/${id}/deliveries`)).body.deliveries as { id: string; type: string; state: string; attempts: { status: number | null; error: string | null }[] }[];
  const types = (receiverOf: WebhookReceiver) => receiverOf.received.map((each) => JSON.parse(each.body).type as string);
  let feature = 0;
  /** A fresh feature: each test's events are its own. */
  const newFeature = async () => {
    const key = `f${++feature}`;
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/${key}`, {})).status).toBe(200);
    return key;
  };
  const target = (key: string, rules: unknown[], environmentId = keys.production.id) => admin("PUT", `/admin/environments/${environmentId}/features/${key}/targeting`, { rules });

  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_WEBHOOK_ALLOW: "127.0.0.1/32", SWITCHYARD_WEBHOOK_TIMEOUT_MS: "700", SWITCHYARD_WEBHOOK_RETRY_BASE_MS: "100", ...ACCOUNT_TEST_ENV } });
    keys = await createApp(server.url, server.adminToken);
  });
  afterAll(async () => {
    await server?.stop();
    for (const each of receivers) await each.close();
  });

  it("validates the settings: 400 naming the path, and refuses private targets at creation", async () => {
    const url = "http://127.0.0.1:9/hook";
    const cases: [Record<string, unknown>, string, string][] = [
      [{ url: "ftp://example.com/x", events: ["*"] }, "INVALID_BODY", "url"],
      [{ url: "not a url", events: ["*"] }, "INVALID_BODY", "url"],
      [{ url, events: ["feature.created", "feature.exploded"] }, "INVALID_BODY", "events.1"],
      [{ url, events: [] }, "INVALID_BODY", "events"],
      [{ url, events: ["*"], environments: ["env_nope"] }, "INVALID_BODY", "environments.0"],
      [{ url, events: ["*"], format: "teams" }, "INVALID_BODY", "format"],
      // Private, link-local (cloud metadata) and loopback outside the allow list: refused before anything is sent.
      [{ url: "http://10.0.0.1/hook", events: ["*"] }, "INVALID_WEBHOOK_URL", "url"],
      [{ url: "http://169.254.169.254/latest/meta-data", events: ["*"] }, "INVALID_WEBHOOK_URL", "url"],
      [{ url: "http://127.0.0.2:9/hook", events: ["*"] }, "INVALID_WEBHOOK_URL", "url"],
      [{ url: "http://[::ffff:10.0.0.1]/hook", events: ["*"] }, "INVALID_WEBHOOK_URL", "url"],
    ];
    for (const [body, code, path] of cases) {
      const reply = await admin("POST", hooks(), body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code, JSON.stringify(reply.body)).toBe(code);
      expect(reply.body.error.validationErrors.map((issue: { path: string }) => issue.path), JSON.stringify(reply.body)).toContain(path);
    }
    expect((await admin("GET", hooks())).body.webhooks).toEqual([]);
  });

  it("signs every delivery as Standard Webhooks does, shows the secret only once and never audits it", async () => {
    const sink = await receiver();
    const { webhook, secret } = await create({ url: `${sink.url}/hook`, events: ["feature.created", "targeting.changed"], description: "CI" });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/);
    expect(Buffer.from(secret.slice(6), "base64").length).toBeGreaterThanOrEqual(24);
    const key = await newFeature();
    expect((await target(key, EVERYONE)).status).toBe(200);
    const [created, changed] = await sink.waitFor(2);
    const verifier = new Webhook(secret);
    for (const each of [created!, changed!]) {
      expect(verifier.verify(each.body, each.headers)).toEqual(JSON.parse(each.body));
      expect(each.headers["content-type"]).toBe("application/json");
    }
    // A forged body fails the same verifier.
    expect(() => verifier.verify(changed!.body.replace("true", "false"), changed!.headers)).toThrow();
    const event = JSON.parse(changed!.body);
    expect(event).toMatchObject({
      type: "targeting.changed",
      data: {
        app: { id: keys.app.id, name: "Test app" },
        environment: { id: keys.production.id, name: "production" },
        feature: { key, name: key },
        actor: { kind: "admin", id: "admin" },
        before: [],
        after: EVERYONE,
        diff: { added: ["0"], removed: [], changed: [] },
      },
    });
    expect(JSON.parse(created!.body)).toMatchObject({ type: "feature.created", data: { feature: { key }, environment: null } });
    expect(changed!.headers["webhook-id"]).toMatch(/^msg_/);
    expect(Number(changed!.headers["webhook-timestamp"])).toBeGreaterThan(Date.now() / 1000 - 60);
    // The secret never shows again: not in reads, not in the audit log.
    const reads = JSON.stringify([(await admin("GET", hooks())).body, (await admin("GET", `${hooks()}/${webhook.id}`)).body, (await admin("GET", "/admin/audit?limit=100")).body]);
    expect(reads).not.toContain(secret.slice(6));
    expect(reads).toContain("webhook.create");
    await admin("DELETE", `${hooks()}/${webhook.id}`);
  });

  it("delivers in order per webhook, retries a failing receiver with the same webhook-id, and lists every attempt", async () => {
    const sink = await receiver();
    sink.answer = (_request, index) => (index < 2 ? { status: 500, body: "down" } : { status: 204 });
    const { webhook, secret } = await create({ url: sink.url, events: ["targeting.changed"], environments: [keys.production.id] });
    const key = await newFeature();
    await target(key, EVERYONE);
    await target(key, NOBODY);
    await target(key, EVERYONE, keys.development.id); // another environment: filtered out
    await target(key, EVERYONE);
    const received = await sink.waitFor(5);
    await sleep(300);
    expect(sink.received).toHaveLength(5);
    const ids = received.map((each) => each.headers["webhook-id"]);
    // The first delivery three times (two failures, then its 2xx), then the later ones, in the order of the changes.
    expect(ids[0]).toBe(ids[1]);
    expect(ids[1]).toBe(ids[2]);
    expect(new Set(ids).size).toBe(3);
    expect(received.map((each) => JSON.parse(each.body).data.after)).toEqual([EVERYONE, EVERYONE, EVERYONE, NOBODY, EVERYONE]);
    for (const each of received) expect(new Webhook(secret).verify(each.body, each.headers)).toBeTruthy();
    const listed = await deliveries(webhook.id);
    expect(listed.map((each) => each.state)).toEqual(["delivered", "delivered", "delivered"]);
    expect(listed[2]!.id).toBe(ids[0]);
    expect(listed[2]!.attempts.map((attempt) => attempt.status)).toEqual([500, 500, 204]);
    expect(listed[2]!.attempts[0]!.error).toMatch(/500/);
    await admin("DELETE", `${hooks()}/${webhook.id}`);
  });

  it("gives a receiver that hangs one timed-out attempt, while another webhook is served meanwhile", async () => {
    const slow = await receiver();
    const fast = await receiver();
    slow.answer = (_request, index) => (index === 0 ? "hang" : { status: 200 });
    const one = await create({ url: slow.url, events: ["feature.updated"] });
    const two = await create({ url: fast.url, events: ["feature.updated"] });
    const key = await newFeature();
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/${key}`, { description: "now described" })).status).toBe(200);
    const [hung] = await slow.waitFor(1);
    const [served] = await fast.waitFor(1);
    await slow.waitFor(2);
    // The fast receiver was served while the slow one's first attempt was still open.
    expect(served!.at).toBeLessThan(hung!.closedAt ?? Infinity);
    const attempts = (await deliveries(one.webhook.id))[0]!.attempts;
    expect(attempts[0]).toMatchObject({ status: null });
    expect(attempts[0]!.error).toMatch(/time/i);
    expect(JSON.parse(served!.body)).toMatchObject({ type: "feature.updated", data: { before: { description: null }, after: { description: "now described" } } });
    for (const each of [one, two]) await admin("DELETE", `${hooks()}/${each.webhook.id}`);
  });

  it("never follows a redirect and records it as a failed attempt; a huge answer body costs one attempt", async () => {
    const target2 = await receiver();
    const redirecting = await receiver();
    redirecting.answer = (_request, index) => (index === 0 ? { status: 302, headers: { location: `${target2.url}/elsewhere` } } : { status: 200, body: "x".repeat(5_000_000) });
    const { webhook } = await create({ url: redirecting.url, events: ["feature.archived"] });
    const key = await newFeature();
    await admin("DELETE", `/admin/apps/${keys.app.id}/features/${key}`);
    await redirecting.waitFor(2);
    await sleep(300);
    expect(target2.received).toHaveLength(0);
    const [delivery] = await deliveries(webhook.id);
    expect(delivery!.attempts.map((attempt) => attempt.status)).toEqual([302, 200]);
    expect(delivery!.state).toBe("delivered");
    await admin("DELETE", `${hooks()}/${webhook.id}`);
  });

  it("sends nothing more once disabled (waiting deliveries cancelled) or deleted", async () => {
    const sink = await receiver();
    sink.answer = () => ({ status: 503 });
    const { webhook } = await create({ url: sink.url, events: ["targeting.changed"] });
    const key = await newFeature();
    await target(key, EVERYONE);
    await target(key, NOBODY);
    await sink.waitFor(2);
    const disabled = await admin("PATCH", `${hooks()}/${webhook.id}`, { enabled: false });
    expect(disabled.status).toBe(200);
    expect(disabled.body.cancelledDeliveries).toBe(2);
    const count = sink.received.length;
    await target(key, EVERYONE);
    await sleep(1500);
    expect(sink.received).toHaveLength(count);
    const listed = await deliveries(webhook.id);
    expect(listed).toHaveLength(2);
    expect(listed.every((each) => each.state === "failed")).toBe(true);
    // Enabled again: only what comes after is sent. Deleted: nothing at all, and it is gone.
    sink.answer = () => ({ status: 200 });
    await admin("PATCH", `${hooks()}/${webhook.id}`, { enabled: true });
    await target(key, NOBODY);
    await sink.waitFor(count + 1);
    expect(JSON.parse(sink.received.at(-1)!.body).data.after).toEqual(NOBODY);
    expect((await admin("DELETE", `${hooks()}/${webhook.id}`)).status).toBe(200);
    await target(key, EVERYONE);
    await sleep(1000);
    expect(sink.received).toHaveLength(count + 1);
    expect((await admin("GET", `${hooks()}/${webhook.id}/deliveries`)).status).toBe(404);
  });

  it("signs with both secrets for a day after a rotation; test events and redeliveries keep their webhook-id", async () => {
    const sink = await receiver();
    const { webhook, secret: old } = await create({ url: sink.url, events: ["feature.created"] });
    const rotated = await admin("POST", `${hooks()}/${webhook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(old);
    expect(Date.parse(rotated.body.webhook.previousSecretUntil) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    const test = await admin("POST", `${hooks()}/${webhook.id}/test`);
    expect(test.status).toBe(200);
    expect(test.body.delivery).toMatchObject({ type: "webhook.test", state: "pending" });
    const [first] = await sink.waitFor(1);
    expect(first!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const secret of [old, fresh]) expect(new Webhook(secret).verify(first!.body, first!.headers)).toMatchObject({ type: "webhook.test", data: { app: { id: keys.app.id } } });
    expect(first!.headers["webhook-id"]).toBe(test.body.delivery.id);
    await sleep(200);
    const again = await admin("POST", `${hooks()}/${webhook.id}/deliveries/${test.body.delivery.id}/redeliver`);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const [, second] = await sink.waitFor(2);
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect((await admin("POST", `${hooks()}/${webhook.id}/deliveries/msg_nope/redeliver`)).status).toBe(404);
    await admin("DELETE", `${hooks()}/${webhook.id}`);
  });

  it("announces feedback received through /feedback, once", async () => {
    const sink = await receiver();
    const { webhook, secret } = await create({ url: sink.url, events: ["feedback.created"], environments: [keys.production.id] });
    const key = await newFeature();
    const sent = await request(server.url, "POST", "/feedback", { token: keys.production.publishableKey, body: { userId: "u1", key, score: 4, comment: "handy" } });
    expect(sent.status).toBe(200);
    // An update of the same feedback is not a second feedback.
    await request(server.url, "POST", "/feedback", { token: keys.production.publishableKey, body: { userId: "u1", key, feedbackId: sent.body.feedbackId, comment: "very handy" } });
    const [heard] = await sink.waitFor(1);
    await sleep(1200);
    expect(sink.received).toHaveLength(1);
    expect(new Webhook(secret).verify(heard!.body, heard!.headers)).toMatchObject({
      type: "feedback.created",
      data: { environment: { id: keys.production.id }, feature: { key }, actor: null, after: { feedbackId: sent.body.feedbackId, score: 4, comment: "handy", userId: "u1" } },
    });
    await admin("DELETE", `${hooks()}/${webhook.id}`);
  });

  it("posts Slack's body, unsigned, for the slack format", async () => {
    const sink = await receiver();
    const { webhook } = await create({ url: sink.url, events: ["*"], format: "slack" });
    const key = await newFeature();
    const [message] = await sink.waitFor(1);
    const body = JSON.parse(message!.body);
    expect(typeof body.text).toBe("string");
    expect(body.text).toContain(key);
    expect(Array.isArray(body.blocks)).toBe(true);
    expect(message!.headers["webhook-signature"]).toBeUndefined();
    await admin("DELETE", `${hooks()}/${webhook.id}`);
  });

  it("lets viewers read webhooks and deliveries with only the URL's origin, and write nothing", async () => {
    const { webhook } = await create({ url: "http://127.0.0.1:9/services/T000/B000/s3cr3tpath?token=x", events: ["*"] });
    await createMember(server.url, server.adminToken, "viewer@example.com", "viewer");
    const viewer = await createToken(server.url, await signIn(server.url, "viewer@example.com"), "reader");
    const asViewer = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: viewer.secret, ...(body !== undefined ? { body } : {}) });
    const listed = await asViewer("GET", hooks());
    expect(listed.status).toBe(200);
    expect(listed.body.webhooks.find((each: { id: string }) => each.id === webhook.id).url).toBe("http://127.0.0.1:9/…");
    expect((await asViewer("GET", `${hooks()}/${webhook.id}`)).body.webhook.url).toBe("http://127.0.0.1:9/…");
    expect((await asViewer("GET", `${hooks()}/${webhook.id}/deliveries`)).status).toBe(200);
    for (const [method, path] of [["POST", hooks()], ["PATCH", `${hooks()}/${webhook.id}`], ["DELETE", `${hooks()}/${webhook.id}`], ["POST", `${hooks()}/${webhook.id}/rotate-secret`], ["POST", `${hooks()}/${webhook.id}/test`]] as const) {
      const reply = await asViewer(method, path, method === "DELETE" ? undefined : { url: "http://127.0.0.1:9/x", events: ["*"] });
      expect(reply.status, `${method} ${path}`).toBe(403);
      expect(reply.body.error.code).toBe("FORBIDDEN");
    }
    expect((await admin("GET", `${hooks()}/${webhook.id}`)).body.webhook.url).toBe("http://127.0.0.1:9/services/T000/B000/s3cr3tpath?token=x");
    await admin("DELETE", `${hooks()}/${webhook.id}`);
  });
});
