/**
 * The webhooks pages in Chromium, against a real service and a real receiver on 127.0.0.1: a private URL refused at
 * its field, a webhook created by keyboard with its secret shown once (copied, and the receiver's deliveries verify
 * under it), a test event delivered, a failing receiver's attempts shown and retried, redelivery with the same
 * webhook-id, rotation, an edit of the format, disabling and deletion; a viewer sees the list without any control.
 * axe-core on each state, screenshots at laptop and phone widths.
 */
import type { BrowserContext, Page } from "playwright-core";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMember } from "../support/accounts.js";
import { adminRequest } from "../support/http.js";
import { startReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import {
  confirmInDialog,
  createOwner,
  expectCleanConsole,
  expectNoSeriousA11yViolations,
  HAS_CHROMIUM,
  keepPagesOfFailedTests,
  navLink,
  OWNER,
  PASSWORD,
  screenshotWidths,
  signInByKeyboard,
  startHarness,
  type Harness,
} from "./support.js";

describe.runIf(HAS_CHROMIUM)("dashboard webhooks", () => {
  let harness: Harness;
  let receiver: WebhookReceiver;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let app: { id: string; defaultEnvironmentId: string; environments: { id: string; name: string }[] };
  let secret = "";

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("webhooks", { env: { SWITCHYARD_WEBHOOK_ALLOW: "127.0.0.1/32", SWITCHYARD_WEBHOOK_RETRY_BASE_MS: "300", SWITCHYARD_WEBHOOK_TIMEOUT_MS: "2000" } });
    receiver = await startReceiver();
    await createOwner(harness);
    app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    ({ page, context, errors } = await harness.open());
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: harness.url });
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    await harness?.close();
    await receiver?.close();
  });

  const production = () => app.environments.find((environment) => environment.name === "production")!;

  it("refuses a private address at its field, then creates a webhook by keyboard and shows its secret once", async () => {
    await navLink(page, "Webhooks").focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    await page.getByText("No webhooks yet.").waitFor();
    await expectNoSeriousA11yViolations(page, "the empty webhooks page");

    await page.getByRole("button", { name: "New webhook" }).focus();
    await page.keyboard.press("Enter");
    const form = page.getByRole("form", { name: "Create webhook" });
    await form.getByLabel("Receiver URL").focus();
    await page.keyboard.type("http://169.254.169.254/latest/meta-data/");
    await page.keyboard.press("Enter");
    await form.getByText(/link-local/).waitFor();
    expect(await form.getByLabel("Receiver URL").getAttribute("aria-invalid")).toBe("true");
    expect(receiver.received).toHaveLength(0);

    await form.getByLabel("Receiver URL").fill("");
    await form.getByLabel("Receiver URL").focus();
    await page.keyboard.type(`${receiver.url}/switchyard`);
    // Some events, not all: untick "every event" with the keyboard, then tick two.
    await form.getByLabel("Every event, including kinds added later").focus();
    await page.keyboard.press("Space");
    await form.getByRole("checkbox", { name: /Targeting changed/ }).focus();
    await page.keyboard.press("Space");
    await form.getByRole("checkbox", { name: /Feature created/ }).check();
    await form.getByRole("checkbox", { name: "production" }).check();
    await form.getByLabel("Description (optional)").fill("Deploy bot <CI>");
    await expectNoSeriousA11yViolations(page, "the new webhook form");
    await screenshotWidths(harness, page, "webhooks-new");
    await form.getByRole("button", { name: "Create webhook" }).click();

    const status = page.getByRole("status").filter({ hasText: "shown only now" });
    await status.waitFor();
    secret = (await status.locator("code").textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "Copy signing secret" }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    const row = page.getByRole("row", { name: /Deploy bot <CI>/ });
    await row.getByText("Targeting changed, Feature created").or(row.getByText("Feature created, Targeting changed")).waitFor();
    await row.getByRole("cell", { name: "production" }).waitFor();
    await row.getByText("Enabled").waitFor();
    await expectNoSeriousA11yViolations(page, "the webhooks list with a new secret");
    await screenshotWidths(harness, page, "webhooks-list");

    // The secret is not in any later answer: reloading forgets it.
    await page.reload();
    await page.getByRole("row", { name: /Deploy bot/ }).waitFor();
    expect(await page.content()).not.toContain(secret);
  });

  it("sends a test event, shows each attempt of a failing receiver and its retry, and redelivers with the same id", async () => {
    await page.getByRole("link", { name: "Deploy bot <CI>" }).click();
    await page.getByRole("heading", { name: "Deploy bot <CI>", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Send test event" }).click();
    const deliveries = page.getByRole("table", { name: "Deliveries of this webhook" });
    await deliveries.getByRole("row", { name: /Webhook test/ }).getByText("delivered").waitFor({ timeout: 15_000 });
    await deliveries.getByText(/HTTP 200/).first().waitFor();
    const [test] = await receiver.waitFor(1);
    // Signed with the secret the page showed once, checked by an independent Standard Webhooks verifier.
    expect(new StandardWebhook(secret).verify(test!.body, test!.headers)).toMatchObject({ type: "webhook.test" });
    // What was sent can be read on the page: the event as JSON, behind a disclosure.
    const testRow = deliveries.getByRole("row", { name: /Webhook test/ });
    await testRow.getByText("Event JSON").click();
    expect(JSON.parse((await testRow.locator("pre").textContent())!)).toEqual(JSON.parse(test!.body));

    // The receiver fails twice, then accepts: the attempts and their errors show, and the delivery ends delivered;
    // the targeting change after it waits its turn (strict order per webhook), then goes through.
    receiver.answer = (_request, index) => (index < 3 ? { status: 503, body: "down for maintenance" } : { status: 200 });
    const key = "huddle";
    const created = await adminRequest(harness.server, "PUT", `/admin/apps/${app.id}/features/${key}`, { name: "Huddle" });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const targeted = await adminRequest(harness.server, "PUT", `/admin/environments/${production().id}/features/${key}/targeting`, { rules: [{ filter: { type: "constant", value: true } }] });
    expect(targeted.status, JSON.stringify(targeted.body)).toBe(200);
    // Changes made elsewhere show on asking: the page reads the list again while a delivery is pending.
    await page.getByRole("button", { name: "Refresh deliveries" }).click();
    const failing = deliveries.getByRole("row", { name: /Feature created/ });
    await failing.getByText("the receiver answered 503").first().waitFor({ timeout: 15_000 });
    await failing.getByText("delivered").waitFor({ timeout: 20_000 });
    expect(await failing.getByText("HTTP 503").count()).toBe(2);
    expect(await failing.getByText("HTTP 200").count()).toBe(1);
    const targeting = deliveries.getByRole("row", { name: /Targeting changed/ });
    await targeting.getByText("delivered").waitFor({ timeout: 15_000 });
    await expectNoSeriousA11yViolations(page, "a webhook with its deliveries");
    await screenshotWidths(harness, page, "webhook-deliveries");

    const before = receiver.received.length;
    const targetingId = receiver.received.filter((each) => JSON.parse(each.body).type === "targeting.changed").at(-1)!.headers["webhook-id"];
    await targeting.getByRole("button", { name: /Redeliver/ }).focus();
    await page.keyboard.press("Enter");
    await page.getByText("queued again, with the same webhook-id").waitFor();
    const again = await receiver.waitFor(before + 1);
    expect(again.at(-1)!.headers["webhook-id"]).toBe(targetingId);
  });

  it("rotates the secret (both sign for a day), edits the format, disables and deletes", async () => {
    await page.getByRole("button", { name: "Rotate secret" }).click();
    await confirmInDialog(page, "Rotate secret");
    const status = page.getByRole("status").filter({ hasText: "new signing secret" });
    await status.waitFor();
    const rotated = (await status.locator("code").textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByText("Previous secret").waitFor();
    const sent = receiver.received.length;
    await page.getByRole("button", { name: "Send test event" }).click();
    const tests = page.getByRole("table", { name: "Deliveries of this webhook" }).getByRole("row", { name: /Webhook test/ });
    await expect.poll(() => tests.filter({ hasText: "delivered" }).count(), { timeout: 15_000 }).toBe(2);
    const last = (await receiver.waitFor(sent + 1))[sent]!;
    expect(last.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(new StandardWebhook(rotated).verify(last.body, last.headers)).toMatchObject({ type: "webhook.test" });
    expect(new StandardWebhook(secret).verify(last.body, last.headers)).toMatchObject({ type: "webhook.test" });

    await page.getByRole("button", { name: "Edit settings" }).click();
    const form = page.getByRole("form", { name: "Save webhook" });
    await form.getByLabel("Format").selectOption("slack");
    await form.getByRole("button", { name: "Save webhook" }).click();
    await page.getByText("Webhook saved.").waitFor();
    await page.getByRole("definition").filter({ hasText: /^Slack$/ }).waitFor();

    await page.getByRole("button", { name: "Disable" }).click();
    await confirmInDialog(page, "Disable webhook");
    await page.getByText(/^Webhook disabled/).waitFor();
    // The message can be drawn before the reloaded webhook; the button that turns into "Enable" marks the reload.
    await page.getByRole("button", { name: "Enable" }).waitFor();
    expect(await page.getByRole("button", { name: "Send test event" }).isDisabled()).toBe(true);
    await screenshotWidths(harness, page, "webhook-disabled");

    await page.getByRole("button", { name: "Delete webhook" }).click();
    await confirmInDialog(page, "Delete webhook");
    await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
    await page.getByText("No webhooks yet.").waitFor();
    expect((await adminRequest(harness.server, "GET", `/admin/apps/${app.id}/webhooks`)).body.webhooks).toEqual([]);
    expectCleanConsole(errors);
  });

  it("shows a viewer the webhooks without a control to change them, and no receiver path", async () => {
    await adminRequest(harness.server, "POST", `/admin/apps/${app.id}/webhooks`, { url: `${receiver.url}/private/path-token`, events: ["*"], description: "Ops channel" });
    await createMember(harness.url, harness.server.adminToken, "viewer@example.com", "viewer");
    const viewer = await harness.open();
    await signInByKeyboard(viewer.page, harness.url, "viewer@example.com", PASSWORD);
    await viewer.page.goto(`${harness.url}/dashboard/#/apps/${app.id}/environments/${app.defaultEnvironmentId}/webhooks`);
    await viewer.page.getByRole("row", { name: /Ops channel/ }).waitFor();
    expect(await viewer.page.getByRole("button", { name: "New webhook" }).count()).toBe(0);
    expect(await viewer.page.content()).not.toContain("path-token");
    await viewer.page.getByRole("link", { name: "Ops channel" }).click();
    await viewer.page.getByRole("heading", { name: "Deliveries" }).waitFor();
    expect(await viewer.page.getByRole("button", { name: /Send test event|Rotate secret|Delete webhook/ }).count()).toBe(0);
    await expectNoSeriousA11yViolations(viewer.page, "a webhook as a viewer sees it");
    expectCleanConsole(viewer.errors);
    await viewer.context.close();
  });
});
