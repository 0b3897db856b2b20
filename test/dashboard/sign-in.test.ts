/**
 * Sign-in area in Chromium: the first-start screen creates the first owner with the admin token and signs in; sign
 * out; a wrong password shows the API's error; sign in by keyboard; a reload keeps the session and its CSRF token
 * (a write after the reload works). axe-core on every page.
 */
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { navLink, screenshotWidths, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, OWNER, screenshot, signInByKeyboard, startHarness, type Harness, keepPagesOfFailedTests } from "./support.js";

describe.runIf(HAS_CHROMIUM)("dashboard sign-in", () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("sign-in");
    ({ page, context, errors } = await harness.open());
  });
  afterAll(async () => {
    await context?.close();
    await harness?.close();
  });

  it("creates the first owner with the admin token on the first-start screen, by keyboard", async () => {
    await page.goto(`${harness.url}/dashboard/`);
    await page.getByRole("heading", { name: "Welcome to Switchyard" }).waitFor();
    // It names the file the token is kept in, whatever the data directory.
    expect(await page.getByText("of the service's data directory").count()).toBe(1);
    await expectNoSeriousA11yViolations(page, "first-start page");
    await screenshotWidths(harness, page, "first-start");
    await page.getByLabel("Admin token").focus();
    await page.keyboard.type(harness.server.adminToken);
    await page.keyboard.press("Tab");
    await page.keyboard.type("Olivia Owner");
    await page.keyboard.press("Tab");
    await page.keyboard.type(OWNER.email);
    await page.keyboard.press("Tab");
    await page.keyboard.type(OWNER.password);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Create your first app" }).waitFor();
    expect(await page.getByText(OWNER.email).count()).toBe(1);
    expect(await page.locator(".badge").textContent()).toBe("owner");
    const setup = await (await fetch(`${harness.url}/admin/setup`)).json();
    expect(setup.hasOwner).toBe(true);
    await expectNoSeriousA11yViolations(page, "no-apps page");
    await screenshot(harness, page, "no-apps");
  });

  it("creates an app by keyboard, ends on its keys, and keeps the session and its CSRF token across a reload", async () => {
    await page.getByLabel("App name").focus();
    await page.keyboard.type("Acme");
    await page.keyboard.press("Enter");
    // A new app ends on its keys page, whose URL names the app and its default environment (§9).
    await page.getByRole("heading", { name: "Keys and SDK set-up" }).waitFor();
    await page.getByText("Acme is ready.").waitFor();
    const app = (await (await fetch(`${harness.url}/admin/apps`, { headers: { authorization: `Bearer ${harness.server.adminToken}` } })).json()).apps[0];
    expect(new URL(page.url()).hash).toBe(`#/apps/${app.id}/environments/${app.defaultEnvironmentId}/keys`);
    expect(await page.getByTestId("secret-key").textContent()).toMatch(/^sec_production_[A-Za-z0-9]{20,}$/);
    await navLink(page, "Features").click();
    await page.getByRole("heading", { name: "Features" }).waitFor();
    expect(await page.getByLabel("App", { exact: true }).inputValue()).toBe(app.id);
    await page.reload();
    await page.getByRole("heading", { name: "Features" }).waitFor();
    // A write after the reload: the page found its CSRF token again through GET /admin/session.
    await page.getByRole("button", { name: "New feature" }).click();
    await page.getByLabel("Key").fill("after-reload");
    await page.getByRole("button", { name: "Create feature" }).click();
    await page.getByRole("heading", { name: "after-reload", level: 1 }).waitFor();
  });

  it("signs out, shows the API's error for a wrong password, and signs in again by keyboard", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Switchyard" }).waitFor();
    expect(await page.getByText("You are signed out.").count()).toBe(1);
    const session = await context.request.get(`${harness.url}/admin/session`);
    expect(session.status()).toBe(401);

    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel("Password").fill("not the password at all");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("INVALID_CREDENTIALS");
    await expectNoSeriousA11yViolations(page, "sign-in page with an error");
    await screenshot(harness, page, "sign-in-error");

    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
    // The list loads after the heading shows.
    await page.getByRole("link", { name: "after-reload" }).waitFor();
    await expectNoSeriousA11yViolations(page, "features page");
    await screenshot(harness, page, "features-after-sign-in");
    expectCleanConsole(errors);
  });

  it("returns to the sign-in page when the session ends elsewhere", async () => {
    // The same browser's session is ended by a request outside the page (as an idle timeout or a removal would).
    const { csrfToken } = await (await context.request.get(`${harness.url}/admin/session`)).json();
    expect((await context.request.delete(`${harness.url}/admin/session`, { headers: { "x-csrf-token": csrfToken } })).status()).toBe(200);
    await page.getByRole("link", { name: "after-reload" }).click();
    await page.getByText("Your session ended: sign in again.").waitFor();
    expect(await page.getByRole("heading", { name: "Sign in to Switchyard" }).count()).toBe(1);
  });

  it("logs no console error on a signed-out load, not even the browser's 'Failed to load resource' (§9)", async () => {
    const { page: fresh, context: freshContext, errors: freshErrors } = await harness.open();
    const failed: string[] = [];
    fresh.on("response", (response) => response.status() >= 400 && failed.push(`${response.status()} ${response.url()}`));
    await fresh.goto(`${harness.url}/dashboard/`);
    await fresh.getByRole("heading", { name: "Sign in to Switchyard" }).waitFor();
    await fresh.reload();
    await fresh.getByRole("heading", { name: "Sign in to Switchyard" }).waitFor();
    expect(freshErrors).toEqual([]);
    expect(failed).toEqual([]);
    // Signed in and out again in the same browser: the next load asks nothing that fails either.
    await fresh.getByLabel("Email").fill(OWNER.email);
    await fresh.getByLabel("Password").fill(OWNER.password);
    await fresh.getByRole("button", { name: "Sign in" }).click();
    await fresh.getByRole("button", { name: "Sign out" }).click();
    await fresh.getByText("You are signed out.").waitFor();
    await fresh.reload();
    await fresh.getByRole("heading", { name: "Sign in to Switchyard" }).waitFor();
    expect(freshErrors).toEqual([]);
    expect(failed).toEqual([]);
    await freshContext.close();
  });
});
