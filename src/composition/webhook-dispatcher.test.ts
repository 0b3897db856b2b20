/**
 * The dispatcher over a real store and the standalone management log: an address refused before an attempt is a
 * recorded failed attempt (the resolver is the test's: nothing is sent anywhere), one webhook's attempts run in queue
 * order, a slow one does not hold another, and `maxInFlight` bounds the attempts at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ADMIN_ACTOR } from "../accounts/principal.js";
import type { ChangeBodies, ChangeOf, ChangeType } from "../management/changes.js";
import { LocalManagementLog } from "../management/management-log.js";
import { EMPTY_ALLOW_LIST } from "../management/webhooks/safe-post.js";
import { sendDelivery, type AttemptResult } from "../management/webhooks/send-delivery.js";
import type { DeliveryRecord, WebhookRecord } from "../management/webhooks/webhook-records.js";
import { WebhookRepository } from "../management/webhooks/webhook-repository.js";
import { createLogger } from "../observability/logger.js";
import type { KvStore } from "../storage/kv.js";
import { planApp } from "../tenancy/tenancy-repository.js";
import { openStore } from "../../test/support/stores.js";
import { WebhookDispatcher, webhookPolicy, type DispatcherOptions } from "./webhook-dispatcher.js";
import { ConfigError, loadConfig } from "../config/config.js";

let counter = 0;
function change<T extends ChangeType>(type: T, body: ChangeBodies[T]): ChangeOf<T> {
  return { id: `chg_${++counter}`, at: new Date().toISOString(), actor: ADMIN_ACTOR, address: null, type, ...body } as unknown as ChangeOf<T>;
}

async function until<T>(read: () => T, accept: (value: T) => boolean): Promise<T> {
  for (let tries = 0; tries < 500; tries += 1) {
    const value = read();
    if (accept(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`not reached: ${JSON.stringify(read())}`);
}

describe("webhook dispatcher", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp(options: Partial<DispatcherOptions> & Pick<DispatcherOptions, "send">, webhookIds: string[], url = "https://hooks.example.test/x") {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-dispatch-"));
    const store: KvStore = await openStore("lmdb", dir);
    cleanups.push(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const log = new LocalManagementLog(store);
    const planned = planApp("Acme", new Date().toISOString());
    const appId = planned.app.id;
    await log.submit(change("app.create", { app: planned.app, trackingKeyDigest: planned.trackingKeyDigest, environments: planned.environments.map((each) => each.record) }));
    for (const id of webhookIds) {
      await log.submit(change("webhook.create", { webhook: { id, appId, url, events: ["*"], environments: [], format: "standard", description: null, enabled: true, createdAt: new Date().toISOString(), createdBy: ADMIN_ACTOR, secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } }));
    }
    const test = async (webhookId: string) => {
      const outcome = await log.submit(change("webhook.test", { appId, webhookId }));
      if (!outcome.ok) throw new Error(outcome.error.message);
      return outcome.value.delivery.id;
    };
    const start = () => {
      const dispatcher = new WebhookDispatcher(store, log, { nodeId: "n1", maxInFlight: 8, timeoutMs: 1000, retryBaseMs: 60_000, ...options }, createLogger("silent"));
      cleanups.push(() => dispatcher.stop());
      return dispatcher;
    };
    return { webhooks: new WebhookRepository(store), test, start };
  }

  it("records an address refused before the attempt as a failed attempt, and retries it later", async () => {
    const looked: string[] = [];
    // The name resolves to a private address: refused before any connection.
    const lookup = ((hostname: string, _options: unknown, callback: (error: null, addresses: { address: string; family: number }[]) => void) => {
      looked.push(hostname);
      callback(null, [{ address: "10.0.0.1", family: 4 }]);
    }) as never;
    const { webhooks, test, start } = await setUp({ send: (webhook, delivery) => sendDelivery(webhook, delivery, { policy: { allow: EMPTY_ALLOW_LIST, lookup, timeoutMs: 1000 }, publicUrl: undefined }) }, ["wh_1"]);
    const id = await test("wh_1");
    start();
    const delivery = await until(() => webhooks.delivery(id)!, (each) => each.attempts.length > 0);
    expect(looked).toEqual(["hooks.example.test"]);
    expect(delivery.state).toBe("pending");
    expect(delivery.attempts[0]).toMatchObject({ status: null, nodeId: "n1" });
    expect(delivery.attempts[0]!.error).toMatch(/10\.0\.0\.1|private/);
    expect(Date.parse(delivery.nextAttemptAt!) - Date.parse(delivery.attempts[0]!.at)).toBeGreaterThanOrEqual(60_000);
  });

  it("attempts one webhook's deliveries in order, while another webhook's go on beside a slow one", async () => {
    const calls: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const send = async (webhook: WebhookRecord, delivery: DeliveryRecord): Promise<AttemptResult> => {
      calls.push(`${webhook.id}:${delivery.id}`);
      if (webhook.id === "wh_slow") await held;
      return { status: 200, durationMs: 1, error: null };
    };
    const { webhooks, test, start } = await setUp({ send }, ["wh_slow", "wh_fast"]);
    const slow = [await test("wh_slow"), await test("wh_slow")];
    const fast = [await test("wh_fast"), await test("wh_fast"), await test("wh_fast")];
    start();
    await until(() => fast.map((id) => webhooks.delivery(id)!.state), (states) => states.every((state) => state === "delivered"));
    // The slow webhook's first attempt still hangs, and its second waits behind it.
    expect(calls.filter((call) => call.startsWith("wh_slow"))).toEqual([`wh_slow:${slow[0]}`]);
    expect(calls.filter((call) => call.startsWith("wh_fast"))).toEqual(fast.map((id) => `wh_fast:${id}`));
    release();
    await until(() => slow.map((id) => webhooks.delivery(id)!.state), (states) => states.every((state) => state === "delivered"));
    expect(calls.filter((call) => call.startsWith("wh_slow"))).toEqual(slow.map((id) => `wh_slow:${id}`));
  });

  it("keeps at most maxInFlight attempts at once", async () => {
    let inFlight = 0;
    let most = 0;
    const send = async (): Promise<AttemptResult> => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 30));
      inFlight -= 1;
      return { status: 204, durationMs: 30, error: null };
    };
    const ids = ["wh_a", "wh_b", "wh_c", "wh_d"];
    const { webhooks, test, start } = await setUp({ send, maxInFlight: 2 }, ids);
    const queued = [];
    for (const id of ids) queued.push(await test(id), await test(id));
    start();
    await until(() => queued.map((id) => webhooks.delivery(id)!.state), (states) => states.every((state) => state === "delivered"));
    expect(most).toBe(2);
  });

  it("refuses to start on an allow list it cannot read, naming the variable", () => {
    expect(() => webhookPolicy(loadConfig({ SWITCHYARD_WEBHOOK_ALLOW: "127.0.0.1/32, not a host!" }))).toThrow(ConfigError);
    expect(() => webhookPolicy(loadConfig({ SWITCHYARD_WEBHOOK_ALLOW: "127.0.0.1/33" }))).toThrow(/SWITCHYARD_WEBHOOK_ALLOW/);
    expect(webhookPolicy(loadConfig({ SWITCHYARD_WEBHOOK_ALLOW: "127.0.0.1/32,hooks.internal" })).allow.entries).toEqual(["127.0.0.1/32", "hooks.internal"]);
  });
});
