/**
 * The outbox as management changes fill it, on both stores: which events a change raises, in which order, for which
 * webhooks; nothing for a refused change; the lease a claim takes; the retry schedule; the signature.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { ADMIN_ACTOR } from "../../accounts/principal.js";
import type { KvStore } from "../../storage/kv.js";
import { planApp, planEnvironment } from "../../tenancy/tenancy-repository.js";
import { openStore, type StoreKind } from "../../../test/support/stores.js";
import type { ChangeBodies, ChangeOf, ChangeType } from "../changes.js";
import { LocalManagementLog } from "../management-log.js";
import { MAX_ATTEMPTS, outcomeOf, retryDelayMs } from "./retry-schedule.js";
import { sign, signedHeaders } from "./signing.js";
import { WebhookRepository } from "./webhook-repository.js";
import { WEBHOOK_PROJECTION } from "./feedback-projection.js";
import { derivedId } from "./webhook-outbox.js";
import type { FeedbackRecord } from "../../tracking/tracking-records.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
let clock = Date.UTC(2026, 0, 1);
let counter = 0;

function change<T extends ChangeType>(type: T, body: ChangeBodies[T]): ChangeOf<T> {
  clock += 1000;
  return { id: `chg_${++counter}`, at: new Date(clock).toISOString(), actor: ADMIN_ACTOR, address: null, type, ...body } as unknown as ChangeOf<T>;
}

describe.each<StoreKind>(["lmdb", "log"])("webhook outbox (%s store)", (kind) => {
  const dirs: string[] = [];
  const stores: KvStore[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  async function setUp() {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-outbox-"));
    dirs.push(dir);
    const store = await openStore(kind, dir);
    stores.push(store);
    const log = new LocalManagementLog(store);
    const planned = planApp("Acme", new Date(clock).toISOString());
    const appId = planned.app.id;
    const production = planned.environments[0]!.record.id;
    const staging = planEnvironment(appId, "staging", new Date(clock).toISOString()).record;
    await log.submit(change("app.create", { app: planned.app, trackingKeyDigest: planned.trackingKeyDigest, environments: planned.environments.map((each) => each.record) }));
    await log.submit(change("environment.create", { environment: staging }));
    const webhook = (id: string, events: string[], environments: string[] = []) => ({
      id, appId, url: "https://hooks.example.com/x", events, environments, format: "standard" as const, description: null, enabled: true, createdAt: new Date(clock).toISOString(), createdBy: ADMIN_ACTOR, secret: SECRET,
    });
    const submit = async <T extends ChangeType>(type: T, body: ChangeBodies[T]) => log.submit(change(type, body));
    const queued = (webhookId: string) =>
      new WebhookRepository(store)
        .deliveries(webhookId, 100)
        .reverse()
        .map((delivery) => `${delivery.event.type}${delivery.event.data.environment ? `@${delivery.event.data.environment.name}` : ""}`);
    return { store, log, appId, production, staging: staging.id, webhook, submit, queued };
  }

  it("queues the events of each applied change, in order, for the webhooks that want them", async () => {
    const { appId, production, staging, webhook, submit, queued } = await setUp();
    await submit("webhook.create", { webhook: webhook("wh_all", ["*"]) });
    await submit("webhook.create", { webhook: webhook("wh_staging", ["*"], [staging]) });
    await submit("webhook.create", { webhook: webhook("wh_features", ["feature.created", "feature.archived"]) });
    await submit("feature.put", { appId, featureKey: "huddle", featureId: "ftHuddle00001", fields: {} });
    await submit("rules.put", { environmentId: production, featureKey: "huddle", kind: "targeting", list: EVERYONE });
    await submit("rules.put", { environmentId: staging, featureKey: "huddle", kind: "config", list: [] });
    await submit("feature.enabled", { environmentId: production, featureKey: "huddle", enabled: false });
    await submit("policy.put", { environmentId: production, policy: { allowSelfApproval: true } });
    await submit("change-request.create", { environmentId: production, requestId: "cr_1", title: "T", description: null, changes: [{ feature: "huddle", targeting: { rules: [] } }], scheduledAt: null });
    expect((await submit("change-request.review", { environmentId: production, requestId: "cr_1", decision: "approve", comment: null, revision: null })).ok).toBe(true);
    await submit("change-request.apply", { environmentId: production, requestId: "cr_1" });
    await submit("feature.archive", { appId, featureKey: "huddle" });
    expect(queued("wh_all")).toEqual([
      "feature.created",
      "targeting.changed@production",
      "config.changed@staging",
      "targeting.changed@production",
      "change_request.created@production",
      "change_request.approved@production",
      "targeting.changed@production",
      "change_request.applied@production",
      "feature.archived",
    ]);
    // An environment filter keeps the events of that environment and those of no environment.
    expect(queued("wh_staging")).toEqual(["feature.created", "config.changed@staging", "feature.archived"]);
    expect(queued("wh_features")).toEqual(["feature.created", "feature.archived"]);
  });

  it("announces a scheduled request, and its suspension when its base moved before its time", async () => {
    const { appId, production, webhook, submit, queued } = await setUp();
    await submit("webhook.create", { webhook: webhook("wh_cr", ["change_request.scheduled", "change_request.suspended", "change_request.applied"]) });
    await submit("feature.put", { appId, featureKey: "huddle", featureId: "ftHuddle00001", fields: {} });
    const scheduledAt = new Date(clock + 5000).toISOString();
    await submit("change-request.create", { environmentId: production, requestId: "cr_1", title: "Later", description: null, changes: [{ feature: "huddle", targeting: { rules: EVERYONE } }], scheduledAt });
    await submit("rules.put", { environmentId: production, featureKey: "huddle", kind: "targeting", list: [] });
    clock += 10_000;
    const fired = await submit("change-request.fire", { environmentId: production, requestId: "cr_1" });
    expect(fired.ok && fired.value.changeRequest?.state).toBe("suspended");
    expect(queued("wh_cr")).toEqual(["change_request.scheduled@production", "change_request.suspended@production"]);
  });

  it("carries before, after and the diff of a rules write, and the kill switch's move", async () => {
    const { store, appId, production, webhook, submit } = await setUp();
    await submit("webhook.create", { webhook: webhook("wh_all", ["targeting.changed"]) });
    await submit("feature.put", { appId, featureKey: "huddle", featureId: "ftHuddle00001", fields: { name: "Huddles" } });
    await submit("rules.put", { environmentId: production, featureKey: "huddle", kind: "targeting", list: EVERYONE });
    await submit("rules.put", { environmentId: production, featureKey: "huddle", kind: "targeting", list: [] });
    await submit("feature.enabled", { environmentId: production, featureKey: "huddle", enabled: false });
    const events = new WebhookRepository(store).deliveries("wh_all", 10).reverse().map((delivery) => delivery.event);
    expect(events[0]!.data).toMatchObject({ feature: { key: "huddle", name: "Huddles" }, before: [], after: EVERYONE, diff: { added: ["0"], removed: [], changed: [] }, details: { fromVersion: 0, toVersion: 1 } });
    expect(events[1]!.data).toMatchObject({ before: EVERYONE, after: [], diff: { added: [], removed: ["0"] } });
    expect(events[2]!.data).toMatchObject({ before: { enabled: true }, after: { enabled: false }, details: { killSwitch: true } });
    expect(new Set(events.map((event) => event.id)).size).toBe(3);
  });

  it("queues nothing for a refused change, a disabled webhook or a change held for approval", async () => {
    const { appId, production, webhook, submit, queued } = await setUp();
    await submit("webhook.create", { webhook: webhook("wh_all", ["*"]) });
    await submit("webhook.create", { webhook: webhook("wh_off", ["*"]) });
    await submit("webhook.update", { appId, webhookId: "wh_off", fields: { enabled: false } });
    expect((await submit("rules.put", { environmentId: production, featureKey: "nope", kind: "targeting", list: EVERYONE })).ok).toBe(false);
    await submit("feature.put", { appId, featureKey: "huddle", featureId: "ftHuddle00001", fields: {} });
    await submit("policy.put", { environmentId: production, policy: { requireApproval: true } });
    const held = await submit("rules.put", { environmentId: production, featureKey: "huddle", kind: "targeting", list: EVERYONE });
    expect(held.ok ? "ok" : held.error.code).toBe("APPROVAL_REQUIRED");
    expect(queued("wh_all")).toEqual(["feature.created"]);
    expect(queued("wh_off")).toEqual([]);
  });

  it("grants a webhook's lease to one node until it expires, and records attempts through the log", async () => {
    const { store, appId, webhook, submit } = await setUp();
    await submit("webhook.create", { webhook: webhook("wh_all", ["*"]) });
    const test = await submit("webhook.test", { appId, webhookId: "wh_all" });
    const deliveryId = test.ok ? test.value.delivery.id : "";
    const until = new Date(clock + 5000).toISOString();
    const first = await submit("webhook.claim", { appId, webhookId: "wh_all", nodeId: "a", until });
    const second = await submit("webhook.claim", { appId, webhookId: "wh_all", nodeId: "b", until: new Date(clock + 9000).toISOString() });
    expect(first.ok && first.value.granted).toBe(true);
    expect(second.ok && second.value).toEqual({ granted: false, lease: { nodeId: "a", until } });
    expect((await submit("webhook.redeliver", { appId, webhookId: "wh_all", deliveryId })).ok).toBe(false); // still pending
    clock += 10_000; // a's lease ran out: b may claim
    const third = await submit("webhook.claim", { appId, webhookId: "wh_all", nodeId: "b", until: new Date(clock + 60_000).toISOString() });
    expect(third.ok && third.value.granted).toBe(true);
    const attempt = { at: new Date(clock).toISOString(), status: 503, durationMs: 5, error: "HTTP 503", nodeId: "b" };
    await submit("webhook.attempt", { appId, webhookId: "wh_all", deliveryId, nodeId: "b", attempt, outcome: "retry", nextAttemptAt: new Date(clock + 5000).toISOString(), leaseUntil: new Date(clock + 60_000).toISOString() });
    const webhooks = new WebhookRepository(store);
    expect(webhooks.head("wh_all")).toMatchObject({ id: deliveryId, state: "pending", attemptsThisRound: 1, attempts: [attempt] });
    await submit("webhook.attempt", { appId, webhookId: "wh_all", deliveryId, nodeId: "b", attempt: { ...attempt, status: 200, error: null }, outcome: "delivered", nextAttemptAt: null, leaseUntil: new Date(clock + 60_000).toISOString() });
    expect(webhooks.head("wh_all")).toBeUndefined();
    expect(webhooks.delivery(deliveryId)).toMatchObject({ state: "delivered", nextAttemptAt: null });
    expect((await submit("webhook.redeliver", { appId, webhookId: "wh_all", deliveryId })).ok).toBe(true);
    expect(webhooks.head("wh_all")).toMatchObject({ id: deliveryId, state: "pending", attemptsThisRound: 0 });
  });
});

describe.each<StoreKind>(["lmdb", "log"])("feedback.created from the projection (%s store)", (kind) => {
  it("queues a new feedback once, and never to a webhook created after it (a rebuild re-projects old feedback)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-outbox-"));
    const store = await openStore(kind, dir);
    try {
      const log = new LocalManagementLog(store);
      const planned = planApp("Acme", new Date(clock).toISOString());
      const production = planned.environments[0]!.record.id;
      await log.submit(change("app.create", { app: planned.app, trackingKeyDigest: planned.trackingKeyDigest, environments: planned.environments.map((each) => each.record) }));
      await log.submit(change("feature.put", { appId: planned.app.id, featureKey: "huddle", featureId: "ftHuddle00001", fields: {} }));
      const webhookAt = clock + 1000;
      await log.submit(change("webhook.create", { webhook: { id: "wh_1", appId: planned.app.id, url: "https://hooks.example.com/x", events: ["feedback.created"], environments: [], format: "standard", description: null, enabled: true, createdAt: new Date(webhookAt).toISOString(), createdBy: ADMIN_ACTOR, secret: SECRET } }));
      const feedback = (id: string, at: number) =>
        ({ feedbackId: id, featureId: "ftHuddle00001", key: "huddle", userId: "u1", companyId: null, score: 3, comment: null, question: null, promptedQuestion: null, promptId: null, source: null, countsForCompanyId: null, timestamp: at, createdAt: at, receivedAt: at }) as unknown as FeedbackRecord;
      const project = (record: FeedbackRecord) => store.write(() => WEBHOOK_PROJECTION.open(store, production).feedback!(record));
      await project(feedback("fb_old", webhookAt - 60_000));
      await project(feedback("fb_new", webhookAt + 60_000));
      await project(feedback("fb_new", webhookAt + 60_000));
      // Another node delivered fb_late before this one projected it (cluster mode): this node never queues it.
      const lateId = derivedId("msg", derivedId("evt", `feedback:${production}:fb_late`, "0"), "wh_1");
      const attempt = { at: new Date(clock).toISOString(), status: 200, durationMs: 3, error: null, nodeId: "other" };
      await log.submit(change("webhook.attempt", { appId: planned.app.id, webhookId: "wh_1", deliveryId: lateId, nodeId: "other", attempt, outcome: "delivered", nextAttemptAt: null, leaseUntil: new Date(clock).toISOString() }));
      await project(feedback("fb_late", webhookAt + 90_000));
      const queued = new WebhookRepository(store).deliveries("wh_1", 10);
      expect(queued.map((delivery) => (delivery.event.data.after as { feedbackId: string }).feedbackId)).toEqual(["fb_new"]);
      expect(new WebhookRepository(store).head("wh_1")?.event.data.after).toMatchObject({ feedbackId: "fb_new" });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("retry schedule", () => {
  it("retries twice within 60 s, goes on for at least 24 h, then fails", () => {
    const base = 5000;
    expect(retryDelayMs(1, base) + retryDelayMs(2, base)).toBeLessThanOrEqual(60_000);
    let total = 0;
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt += 1) total += retryDelayMs(attempt, base);
    expect(total).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(outcomeOf(204, 1)).toBe("delivered");
    expect(outcomeOf(500, MAX_ATTEMPTS - 1)).toBe("retry");
    expect(outcomeOf(null, MAX_ATTEMPTS)).toBe("failed");
    expect(outcomeOf(302, 1)).toBe("retry");
  });
});

describe("signing", () => {
  it("signs as the standardwebhooks package does, with both secrets during a rotation", () => {
    const at = new Date("2026-01-01T00:00:00Z");
    const body = JSON.stringify({ hello: "world" });
    expect(sign(SECRET, "msg_1", at.getTime() / 1000, body)).toBe(new Webhook(SECRET).sign("msg_1", at, body));
    const other = "whsec_" + Buffer.alloc(32, 7).toString("base64");
    const during = signedHeaders({ secret: other, previousSecret: { secret: SECRET, until: "2026-01-02T00:00:00Z" } }, "msg_1", body, at);
    expect(during["webhook-signature"]!.split(" ")).toHaveLength(2);
    const after = signedHeaders({ secret: other, previousSecret: { secret: SECRET, until: "2025-12-31T00:00:00Z" } }, "msg_1", body, at);
    expect(after["webhook-signature"]!.split(" ")).toHaveLength(1);
  });
});
