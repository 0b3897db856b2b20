/**
 * Keys, live events, members, tokens and the audit log in Chromium: masked keys, rotation with a confirmation (the
 * old key stops, the new one is shown once and fills the SDK snippets); a tracked event appears in the live tail,
 * which pauses and resumes; an owner adds a member, changes their role, creates and revokes a token, removes the
 * member; the audit log filtered by entity shows the rotation and who did it. Keyboard: the skip link reaches the
 * content.
 */
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRequest, request } from "../support/http.js";
import { navLink, createOwner, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, OWNER, PASSWORD, screenshot, signInByKeyboard, startHarness, type Harness } from "./support.js";

describe.runIf(HAS_CHROMIUM)("dashboard keys, live events, members and audit", () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let oldPublishable: string;
  let newPublishable: string;

  beforeAll(async () => {
    harness = await startHarness("keys-members");
    await createOwner(harness);
    const app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    oldPublishable = app.environments.find((each: { name: string }) => each.name === "production").publishableKey;
    ({ page, context, errors } = await harness.open());
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
  });
  afterAll(async () => {
    await context?.close();
    await harness?.close();
  });

  const evaluateWith = (key: string) => request(harness.url, "GET", `/features/evaluated?publishableKey=${key}`);

  it("reaches the content with the skip link, by keyboard", async () => {
    // A fresh load (a hash change alone would be a same-document navigation).
    await page.goto(`${harness.url}/dashboard/#/keys`);
    await page.reload();
    await page.getByRole("heading", { name: "Keys and SDK set-up" }).waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    // Following a link moves focus to the new page's heading, so a screen reader announces where it landed.
    await navLink(page, "Live events").focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Live events" }).waitFor();
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("page-title");
    await page.goBack();
    await page.getByRole("heading", { name: "Keys and SDK set-up" }).waitFor();
  });

  it("shows masked keys and rotates one after a confirmation; the SDK snippets carry the new key", async () => {
    const masked = await page.getByTestId("publishable-key").textContent();
    expect(masked).toMatch(/^pub_production_…[A-Za-z0-9]{4}$/);
    expect(masked).not.toBe(oldPublishable);
    expect(await page.locator("pre.code").first().textContent()).toContain(`apiBaseUrl: "${harness.url}"`);
    await expectNoSeriousA11yViolations(page, "keys page");

    await page.getByRole("button", { name: "Rotate publishable key" }).click();
    await page.getByText("New key, shown only now").waitFor();
    newPublishable = (await page.getByTestId("publishable-key").textContent())!;
    expect(newPublishable).toMatch(/^pub_production_[A-Za-z0-9]{20,}$/);
    expect((await evaluateWith(oldPublishable)).status).toBe(401);
    expect((await evaluateWith(newPublishable)).status).toBe(200);
    expect(await page.locator("pre.code").first().textContent()).toContain(`publishableKey: "${newPublishable}"`);
    await screenshot(harness, page, "keys");
  });

  it("starts the live tail at the newest 200 entries of a longer log", async () => {
    const bulk = Array.from({ length: 250 }, (_, index) => ({ type: "event", event: `bulk-${index}`, userId: "u-bulk" }));
    expect((await request(harness.url, "POST", "/bulk", { headers: { authorization: `Bearer ${newPublishable}` }, body: bulk })).status).toBe(200);
    const envId = (await adminRequest(harness.server, "GET", "/admin/apps")).body.apps[0].environments.find((each: { name: string }) => each.name === "production").id;
    const tails = await adminRequest(harness.server, "GET", `/admin/environments/${envId}/log-tails?entries=10`);
    const newest = await adminRequest(harness.server, "GET", `/admin/environments/${envId}/events?after=${tails.body.tails.events}`);
    expect(newest.body.events.map((event: { event: string }) => event.event)).toEqual(bulk.slice(-10).map((item) => item.event));
    const refused = await adminRequest(harness.server, "GET", `/admin/environments/${envId}/log-tails?entries=ten`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.validationErrors[0].path).toBe("entries");

    await navLink(page, "Live events").click();
    await page.getByRole("cell", { name: "bulk-249", exact: true }).waitFor();
    await page.getByRole("cell", { name: "bulk-50", exact: true }).waitFor();
    expect(await page.getByRole("cell", { name: "bulk-49", exact: true }).count()).toBe(0);
  });

  it("shows a tracked event in the live tail, and holds new ones while paused", async () => {
    await page.getByRole("heading", { name: "Live events" }).waitFor();
    const track = (event: string) =>
      request(harness.url, "POST", "/event", { headers: { authorization: `Bearer ${newPublishable}` }, body: { event, userId: "u-live", companyId: "c-live", attributes: { plan: "pro" } } });
    expect((await track("opened-huddle")).status).toBe(200);
    await page.getByRole("cell", { name: "opened-huddle" }).waitFor();
    expect(await page.getByRole("row").filter({ hasText: "opened-huddle" }).textContent()).toContain("c-live");
    await expectNoSeriousA11yViolations(page, "live events");
    await screenshot(harness, page, "live-events");

    await page.getByRole("button", { name: "Pause" }).click();
    await page.getByText("Paused.").waitFor();
    expect((await track("while-paused")).status).toBe(200);
    // Two poll periods pass without the paused page picking the event up.
    await page.waitForTimeout(2500);
    expect(await page.getByRole("cell", { name: "while-paused" }).count()).toBe(0);
    await page.getByRole("button", { name: "Resume" }).click();
    await page.getByRole("cell", { name: "while-paused" }).waitFor();
    // Feature events (what SDKs report about checks) have their own tail.
    const checked = await request(harness.url, "POST", "/features/events", {
      headers: { authorization: `Bearer ${newPublishable}` },
      body: { action: "check", key: "live-feature", evalResult: true, evalContext: { user: { id: "u-live" }, company: { id: "c-live" } } },
    });
    expect(checked.status).toBe(200);
    await page.getByRole("cell", { name: "live-feature" }).waitFor();
    expect(await page.getByRole("row").filter({ hasText: "live-feature" }).textContent()).toContain("check");
    // User and company updates (issue 17) have theirs: a /user and a /company call appear as they arrive.
    const updates = page.getByRole("region", { name: /User and company updates/ });
    const user = await request(harness.url, "POST", "/user", { headers: { authorization: `Bearer ${newPublishable}` }, body: { userId: "u-updated", attributes: { name: "Ada" } } });
    expect(user.status).toBe(200);
    await updates.getByRole("row").filter({ hasText: "u-updated" }).waitFor();
    expect((await updates.getByRole("row").filter({ hasText: "u-updated" }).getByRole("cell").allTextContents()).slice(1)).toEqual(["user", "u-updated", "—", '{"name":"Ada"}']);
    const company = await request(harness.url, "POST", "/company", { headers: { authorization: `Bearer ${newPublishable}` }, body: { companyId: "c-updated", userId: "u-updated", attributes: { plan: "team" } } });
    expect(company.status).toBe(200);
    await updates.getByRole("row").filter({ hasText: "c-updated" }).waitFor();
    expect((await updates.getByRole("row").filter({ hasText: "c-updated" }).getByRole("cell").allTextContents()).slice(1)).toEqual(["company", "u-updated", "c-updated", '{"plan":"team"}']);
    await expectNoSeriousA11yViolations(page, "live events with user and company updates");
  });

  it("lets an owner add a member, change their role, create and revoke a token, and remove the member", async () => {
    await navLink(page, "Members").click();
    await page.getByRole("heading", { name: "Members and tokens" }).waitFor();
    const form = page.getByRole("form", { name: "Add a member" });
    await form.getByLabel("Email").fill("sam@example.com");
    await form.getByLabel("Name").fill("Sam");
    await form.getByLabel("Role").selectOption("editor");
    await form.getByLabel("Initial password").fill(PASSWORD);
    await form.getByRole("button", { name: "Add member" }).click();
    await page.getByRole("cell", { name: "sam@example.com", exact: true }).waitFor();
    const memberOf = async () => ((await adminRequest(harness.server, "GET", "/admin/members")).body.members as { email: string; role: string }[]).find((member) => member.email === "sam@example.com");
    expect((await memberOf())?.role).toBe("editor");

    await page.getByLabel("Role of sam@example.com").selectOption("viewer");
    await expect.poll(async () => (await memberOf())?.role).toBe("viewer");

    const tokens = page.getByRole("form", { name: "Create an API token" });
    await tokens.getByLabel("Token name").fill("ci");
    await tokens.getByRole("button", { name: "Create token" }).click();
    const shown = await page.getByRole("status").textContent();
    const secret = /sya_\S+/.exec(shown ?? "")![0];
    expect((await request(harness.url, "GET", "/admin/apps", { token: secret })).status).toBe(200);
    await expectNoSeriousA11yViolations(page, "members page");
    await screenshot(harness, page, "members");
    await page.getByRole("button", { name: "Revoke ci" }).click();
    await page.getByRole("button", { name: "Revoke ci" }).waitFor({ state: "detached" });
    expect((await request(harness.url, "GET", "/admin/apps", { token: secret })).status).toBe(401);

    await page.getByRole("button", { name: "Reset link for sam@example.com" }).click();
    const link = page.getByRole("status").filter({ hasText: "password reset link" });
    await link.waitFor();
    expect(await link.textContent()).toContain(`${harness.url}/dashboard/#/reset-password?token=`);
    // Sam follows the link in their own browser, sets a password, and signs in with it.
    const resetUrl = /http\S+/.exec((await link.locator("code").textContent())!)![0];
    const { page: sam, context: samContext } = await harness.open();
    await sam.goto(resetUrl);
    await sam.getByRole("heading", { name: "Choose a new password" }).waitFor();
    await expectNoSeriousA11yViolations(sam, "password reset page");
    await sam.getByLabel(/New password/).fill("a brand new passphrase");
    await sam.getByRole("button", { name: "Set password" }).click();
    await sam.getByText("Password set: sign in with it.").waitFor();
    await expectNoSeriousA11yViolations(sam, "sign-in after a reset");
    await signInByKeyboard(sam, harness.url, "sam@example.com", "a brand new passphrase");
    await samContext.close();

    await page.getByRole("button", { name: "Remove sam@example.com" }).click();
    await page.getByRole("cell", { name: "sam@example.com", exact: true }).waitFor({ state: "detached" });
    expect(await memberOf()).toBeUndefined();
  });

  it("creates an environment from the header and switches to it", async () => {
    await page.getByRole("button", { name: "New environment" }).click();
    await page.getByLabel("New environment of Acme").fill("staging");
    await page.keyboard.press("Enter");
    await expect.poll(async () => page.getByLabel("Environment", { exact: true }).evaluate((select: HTMLSelectElement) => select.selectedOptions[0]?.textContent)).toBe("staging");
    const app = (await adminRequest(harness.server, "GET", "/admin/apps")).body.apps[0];
    expect(app.environments.map((environment: { name: string }) => environment.name)).toContain("staging");
  });

  it("shows the audit log filtered by entity, with who did what", async () => {
    await navLink(page, "Audit log").click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    await page.getByLabel("Entity kind").fill("key");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(1);
    const rows = await page.locator("tbody tr").allTextContents();
    expect(rows[0]).toContain("key.rotate");
    // By who: the admin token made the owner and the app in this suite's set-up, nothing else.
    await page.getByLabel("Entity kind").fill("");
    await page.getByLabel("Who").selectOption({ label: "the admin token" });
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(async () => (await page.locator("tbody tr td:nth-child(3)").allTextContents()).join(",")).toBe("member.create,app.create");
    expect(rows[0]).toContain(OWNER.email);
    await expectNoSeriousA11yViolations(page, "audit log");
    await screenshot(harness, page, "audit");
    expectCleanConsole(errors);
  });
});
