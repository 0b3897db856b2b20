/**
 * `switchyard webhooks …` against a real service, as an operator would run it: create (the secret printed once), list,
 * update, a test event that reaches a real receiver on 127.0.0.1, the deliveries, redelivery, secret rotation,
 * disabling, deletion, and the service's refusals passed through (a private URL, an unknown event type).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";
import { switchyardCli } from "../support/switchyard-cli.js";
import { startReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

describe("switchyard webhooks (CLI)", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let appId: string;
  let productionId: string;
  const cli = async (args: string[]) => {
    const run = await switchyardCli(server, ["webhooks", ...args]);
    return { ...run, json: run.code === 0 ? (JSON.parse(run.stdout) as Record<string, any>) : undefined };
  };

  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_WEBHOOK_ALLOW: "127.0.0.1/32", SWITCHYARD_WEBHOOK_RETRY_BASE_MS: "100" } });
    receiver = await startReceiver();
    const keys = await createApp(server.url, server.adminToken);
    appId = keys.app.id;
    productionId = keys.production.id;
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  it("creates, lists, updates, tests, redelivers, rotates, disables and deletes a webhook", async () => {
    const created = await cli(["create", appId, `${receiver.url}/in`, "--events", "feature.created,targeting.changed", "--environments", productionId, "--format", "standard", "--description", "CI pipeline"]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.json!.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/);
    expect(created.json!.webhook).toMatchObject({ url: `${receiver.url}/in`, events: ["feature.created", "targeting.changed"], environments: [productionId], format: "standard", description: "CI pipeline", enabled: true });
    const id = created.json!.webhook.id as string;

    const listed = await cli(["list", appId]);
    expect(listed.json!.webhooks.map((each: { id: string }) => each.id)).toEqual([id]);
    expect(JSON.stringify(listed.json)).not.toContain(created.json!.secret);

    const updated = await cli(["update", appId, id, "--events", "*", "--environments", "all", "--description", "", "--webhook-url", `${receiver.url}/moved`]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(updated.json!.webhook).toMatchObject({ url: `${receiver.url}/moved`, events: ["*"], environments: [], description: null });

    const tested = await cli(["test", appId, id]);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.json!.delivery).toMatchObject({ type: "webhook.test", state: "pending" });
    const [first] = await receiver.waitFor(1);
    expect(first!.path).toBe("/moved");
    expect(JSON.parse(first!.body)).toMatchObject({ type: "webhook.test", data: { app: { id: appId } } });

    await expect.poll(async () => (await cli(["deliveries", appId, id])).json!.deliveries[0]?.state, { timeout: 30_000, interval: 200 }).toBe("delivered");
    const deliveries = (await cli(["deliveries", appId, id, "--limit", "5"])).json!.deliveries;
    expect(deliveries[0]).toMatchObject({ id: tested.json!.delivery.id, type: "webhook.test", state: "delivered", attempts: [{ status: 200, error: null }] });

    const redelivered = await cli(["redeliver", appId, id, tested.json!.delivery.id]);
    expect(redelivered.code, redelivered.stderr).toBe(0);
    const [, again] = await receiver.waitFor(2);
    expect(again!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);

    const rotated = await cli(["rotate-secret", appId, id]);
    expect(rotated.json!.secret).toMatch(/^whsec_/);
    expect(rotated.json!.secret).not.toBe(created.json!.secret);
    expect(rotated.json!.webhook.previousSecretUntil).not.toBeNull();

    const disabled = await cli(["update", appId, id, "--enabled", "false"]);
    expect(disabled.json!.webhook.enabled).toBe(false);
    const refusedTest = await cli(["test", appId, id]);
    expect(refusedTest.code).toBe(1);
    expect(refusedTest.stderr).toContain("CONFLICT");

    expect((await cli(["delete", appId, id])).code).toBe(0);
    expect((await cli(["list", appId])).json!.webhooks).toEqual([]);
  }, 180_000);

  it("passes the service's refusals through: a private address, an unknown event, a bad flag value", async () => {
    const metadata = await cli(["create", appId, "http://169.254.169.254/latest/meta-data/", "--events", "*"]);
    expect(metadata.code).toBe(1);
    expect(metadata.stderr).toContain("INVALID_WEBHOOK_URL");
    expect(metadata.stderr).toContain("link-local");

    const unknown = await cli(["create", appId, `${receiver.url}/in`, "--events", "feature.exploded"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/INVALID_BODY.*events\.0/);

    const enabled = await cli(["create", appId, `${receiver.url}/in`, "--events", "*", "--format", "teams"]);
    expect(enabled.code).toBe(1);
    expect(enabled.stderr).toMatch(/format/);
  }, 60_000);

  it("says what is missing before asking the service", async () => {
    const noEvents = await cli(["create", appId, `${receiver.url}/in`]);
    expect(noEvents.code).toBe(1);
    expect(noEvents.stderr).toContain("Missing --events");
    const noId = await cli(["deliveries", appId]);
    expect(noId.stderr).toContain("Missing WEBHOOK_ID");
    const usage = await cli(["explode", appId]);
    expect(usage.stderr).toContain("switchyard webhooks list APP_ID");
  }, 60_000);
});
