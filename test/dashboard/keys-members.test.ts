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
import { createOwner, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, OWNER, PASSWORD, screenshot, signInByKeyboard, startHarness, type Harness } from "./support.js";

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
    await page.getByRole("link", { name: "Live events" }).focus();
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

  it("shows a tracked event in the live tail, and holds new ones while paused", async () => {
    await page.getByRole("link", { name: "Live events" }).click();
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
  });

  it("lets an owner add a member, change their role, create and revoke a token, and remove the member", async () => {
    await page.getByRole("link", { name: "Members" }).click();
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

    await page.getByRole("button", { name: "Remove sam@example.com" }).click();
    await page.getByRole("cell", { name: "sam@example.com", exact: true }).waitFor({ state: "detached" });
    expect(await memberOf()).toBeUndefined();
  });

  it("shows the audit log filtered by entity, with who did what", async () => {
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    await page.getByLabel("Entity kind").fill("key");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByRole("cell", { name: "key.rotate" }).waitFor();
    const rows = await page.locator("tbody tr").allTextContents();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(OWNER.email);
    await expectNoSeriousA11yViolations(page, "audit log");
    await screenshot(harness, page, "audit");
    expectCleanConsole(errors);
  });
});
