/**
 * Keys, live events, members, tokens and the audit log in Chromium: masked keys, rotation with a confirmation (the
 * old key stops, the new one is shown once and fills the SDK snippets); a tracked event appears in the live tail,
 * which pauses and resumes; an owner adds a member, changes their role, creates and revokes a token, removes the
 * member; the audit log filtered by entity shows the rotation and who did it. Keyboard: the skip link reaches the
 * content.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { build } from "esbuild";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRequest, request } from "../support/http.js";
import { navLink, confirmInDialog, screenshotWidths, createOwner, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, OWNER, PASSWORD, screenshot, signInByKeyboard, startHarness, type Harness, keepPagesOfFailedTests } from "./support.js";

const BUCKET_BROWSER_SDK = readFileSync(createRequire(import.meta.url).resolve("@bucketco/browser-sdk"), "utf8");
/** The OpenFeature web SDK and OFREP web provider as an app's bundler would ship them, exposed as one global. */
const OPENFEATURE_WEB_BUNDLE = build({
  stdin: { contents: 'export { OpenFeature } from "@openfeature/web-sdk"; export { OFREPWebProvider } from "@openfeature/ofrep-web-provider";', resolveDir: process.cwd() },
  bundle: true,
  write: false,
  format: "iife",
  globalName: "OpenFeatureBundle",
  target: "es2022",
  logLevel: "silent",
}).then((result) => result.outputFiles[0]!.text);

describe.runIf(HAS_CHROMIUM)("dashboard keys, live events, members and audit", () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let oldPublishable: string;
  let newPublishable: string;

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("keys-members");
    await createOwner(harness);
    const app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    oldPublishable = app.environments.find((each: { name: string }) => each.name === "production").publishableKey;
    ({ page, context, errors } = await harness.open());
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
    // Signed in at /dashboard/, the page has settled on the only app's URL: navigating now cannot be overtaken.
    expect(new URL(page.url()).hash).toBe(`#/apps/${app.id}/environments/${app.defaultEnvironmentId}/features`);
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

  it("shows the publishable key in full with a copy control and in the snippets; the secret key masked", async () => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: harness.url });
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
    expect(await page.getByTestId("publishable-key").textContent()).toBe(oldPublishable);
    await page.getByRole("button", { name: "Copy publishable key" }).click();
    await page.locator(".copy").filter({ has: page.getByRole("button", { name: "Copy publishable key" }) }).getByText("Copied").waitFor();
    expect(await clipboard()).toBe(oldPublishable);
    // "Copy snippet" copies a snippet that works when pasted: the key in full and the service's SDK address.
    await page.getByRole("button", { name: "Copy @reflag/browser-sdk snippet" }).focus();
    await page.keyboard.press("Enter");
    await expect.poll(clipboard).toContain(`publishableKey: "${oldPublishable}"`);
    expect(await clipboard()).toContain(`apiBaseUrl: "${harness.url}"`);
    expect(await clipboard()).not.toContain("…");
    // Pasted into an app, the Bucket browser snippet works: its SDK reaches this service with the key (its UMD build
    // stands in for the import; the snippet's own lines run unchanged).
    await page.getByRole("button", { name: "Copy @bucketco/browser-sdk snippet" }).click();
    await expect.poll(clipboard).toContain("BucketClient");
    const snippet = await clipboard();
    const app = await context.newPage();
    const answers: number[] = [];
    app.on("response", (response) => response.url().includes("/features/evaluated") && answers.push(response.status()));
    await app.goto(`${harness.url}/health`);
    await app.evaluate(BUCKET_BROWSER_SDK);
    const enabled = await app.evaluate(async (code) => {
      const body = code.replace(/^import .*$/m, "const { BucketClient } = globalThis.BucketBrowserSDK;").replace(/\n([^\n]+)$/, "\nreturn $1");
      return new Function(`return (async () => { ${body} })();`)();
    }, snippet);
    expect(enabled).toBe(false);
    expect(answers).toEqual([200]);
    await app.close();
    // The OpenFeature web snippet too: the web SDK and its OFREP provider, bundled as an app would, stand in for the
    // imports; the snippet's own lines run unchanged and evaluate through /ofrep/v1/evaluate/flags.
    await page.getByRole("button", { name: "Copy @openfeature/ofrep-web-provider snippet" }).click();
    await expect.poll(clipboard).toContain("OFREPWebProvider");
    const openFeatureSnippet = await clipboard();
    expect(openFeatureSnippet).toContain(`Bearer ${oldPublishable}`);
    const openFeatureApp = await context.newPage();
    const ofrepAnswers: number[] = [];
    openFeatureApp.on("response", (response) => response.url().includes("/ofrep/v1/evaluate/flags") && ofrepAnswers.push(response.status()));
    await openFeatureApp.goto(`${harness.url}/health`);
    await openFeatureApp.evaluate(await OPENFEATURE_WEB_BUNDLE);
    const flag = await openFeatureApp.evaluate(async (code) => {
      const body = code.replace(/^import .*$/gm, "").replace(/\n([^\n]+)$/, "\nreturn $1");
      return new Function(`const { OpenFeature, OFREPWebProvider } = globalThis.OpenFeatureBundle; return (async () => { ${body} })();`)();
    }, openFeatureSnippet);
    expect(flag).toBe(false);
    expect(ofrepAnswers).toEqual([200]);
    await openFeatureApp.close();
    expect(await page.getByTestId("secret-key").textContent()).toMatch(/^sec_production_…[A-Za-z0-9]{4}$/);
    expect(await page.getByRole("button", { name: "Copy secret key" }).count()).toBe(0);
    await expectNoSeriousA11yViolations(page, "keys page");
    await screenshotWidths(harness, page, "keys");
  });

  it("rotates keys after the page's own confirmation; a new secret key shows once, with a copy control and a warning", async () => {
    await page.getByRole("button", { name: "Rotate publishable key" }).click();
    await expectNoSeriousA11yViolations(page, "rotate dialog");
    await screenshot(harness, page, "rotate-dialog");
    await confirmInDialog(page, "Rotate publishable key");
    await expect.poll(() => page.getByTestId("publishable-key").textContent()).not.toBe(oldPublishable);
    newPublishable = (await page.getByTestId("publishable-key").textContent())!;
    expect(newPublishable).toMatch(/^pub_production_[A-Za-z0-9]{20,}$/);
    expect((await evaluateWith(oldPublishable)).status).toBe(401);
    expect((await evaluateWith(newPublishable)).status).toBe(200);
    expect(await page.locator("pre.code").first().textContent()).toContain(`publishableKey: "${newPublishable}"`);

    await page.getByRole("button", { name: "Rotate secret key" }).click();
    await confirmInDialog(page, "Rotate secret key");
    await page.getByText("Shown only now").waitFor();
    const secret = (await page.getByTestId("secret-key").textContent())!;
    expect(secret).toMatch(/^sec_production_[A-Za-z0-9]{20,}$/);
    await page.getByRole("button", { name: "Copy secret key" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    expect((await request(harness.url, "GET", "/features", { token: secret })).status).toBe(200);
    // While it is shown, the server snippets carry it too.
    expect(await page.locator("pre.code").nth(2).textContent()).toContain(`secretKey: "${secret}"`);
    expect(await page.getByLabel("@openfeature/ofrep-provider snippet").textContent()).toContain(`"Bearer ${secret}"`);
    await screenshotWidths(harness, page, "keys-secret-once");
    // Once only: after leaving the page, the secret key is masked again.
    await navLink(page, "Features").click();
    await navLink(page, "Keys & SDKs").click();
    await expect.poll(() => page.getByTestId("secret-key").textContent()).toMatch(/^sec_production_…/);
    expect(await page.locator("pre.code").nth(2).textContent()).toContain("process.env.SWITCHYARD_SECRET_KEY");
    expect(await page.getByTestId("publishable-key").textContent()).toBe(newPublishable);
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
    // An event queued by an SDK and sent late sits where it arrived, marked with the date it carries.
    const late = await request(harness.url, "POST", "/event", { headers: { authorization: `Bearer ${newPublishable}` }, body: { event: "sent-late", userId: "u-live", timestamp: "2026-11-03T10:00:00.000Z" } });
    expect(late.status).toBe(200);
    await page.getByRole("cell", { name: "sent-late" }).waitFor();
    const rows = await page.getByRole("region", { name: /^Events/ }).locator("tbody tr td:nth-child(2)").allTextContents();
    expect(rows.slice(0, 2)).toEqual(["sent-late", "opened-huddle"]);
    expect(await page.getByRole("row").filter({ hasText: "sent-late" }).getByRole("cell").first().textContent()).toContain(`dated ${new Date("2026-11-03T10:00:00.000Z").toLocaleString("en-US")}`);
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
    const secret = (await page.getByRole("status").filter({ hasText: "New token" }).locator("code").textContent())!;
    expect(secret).toMatch(/^sya_\S+$/);
    expect((await request(harness.url, "GET", "/admin/apps", { token: secret })).status).toBe(200);
    await expectNoSeriousA11yViolations(page, "members page");
    await screenshot(harness, page, "members");
    await page.getByRole("button", { name: "Revoke ci" }).click();
    await confirmInDialog(page, "Revoke token");
    await page.getByRole("button", { name: "Revoke ci" }).waitFor({ state: "detached" });
    expect((await request(harness.url, "GET", "/admin/apps", { token: secret })).status).toBe(401);

    await page.getByRole("button", { name: "Reset link for sam@example.com" }).click();
    const link = page.getByRole("status").filter({ hasText: "Password reset link for sam@example.com" });
    await link.waitFor();
    // The link says for whom, and copies with one control.
    await page.getByRole("button", { name: "Copy reset link for sam@example.com" }).click();
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
    await confirmInDialog(page, "Remove member");
    await page.getByRole("cell", { name: "sam@example.com", exact: true }).waitFor({ state: "detached" });
    expect(await memberOf()).toBeUndefined();
  });

  it("creates an environment from the header and ends on its keys, the secret key shown once", async () => {
    await page.getByRole("button", { name: "New environment" }).click();
    await page.getByLabel("New environment of Acme").fill("staging");
    await page.keyboard.press("Enter");
    await page.getByText("Environment staging is ready.").waitFor();
    await expect.poll(async () => page.getByLabel("Environment", { exact: true }).evaluate((select: HTMLSelectElement) => select.selectedOptions[0]?.textContent)).toBe("staging");
    const app = (await adminRequest(harness.server, "GET", "/admin/apps")).body.apps[0];
    const staging = app.environments.find((environment: { name: string }) => environment.name === "staging");
    expect(new URL(page.url()).hash).toBe(`#/apps/${app.id}/environments/${staging.id}/keys`);
    expect(await page.getByTestId("publishable-key").textContent()).toBe(staging.publishableKey);
    const secret = (await page.getByTestId("secret-key").textContent())!;
    expect((await request(harness.url, "GET", "/features", { token: secret })).status).toBe(200);
    expect(await page.locator("pre.code").first().textContent()).toContain(`publishableKey: "${staging.publishableKey}"`);
    await screenshotWidths(harness, page, "new-environment-keys");
  });

  it("shows the audit log newest first, actors by email and targets by name, filtered by who, feature, kind and date", async () => {
    await adminRequest(harness.server, "PUT", `/admin/apps/${(await adminRequest(harness.server, "GET", "/admin/apps")).body.apps[0].id}/features/audited`, { description: "for the audit log" });
    await navLink(page, "Audit log").click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    const cells = (column: number) => page.locator(`tbody tr td:nth-child(${column})`).allTextContents();
    // Newest first: the feature just made by the admin token heads the list.
    await expect.poll(async () => (await cells(3))[0]).toBe("feature.create");
    expect((await cells(2))[0]).toBe("admin token");
    expect((await cells(4))[0]).toBe("feature audited");
    // Members by email, environments and apps by name: no raw ids.
    const all = (await page.locator("tbody").textContent())!;
    expect(all).toContain("member sam@example.com");
    expect(all).toContain("publishable key of production (Acme)");
    expect(all).toContain("secret key of production (Acme)");
    expect(all).toContain("environment staging (Acme)");
    expect(all).toContain("token ci");
    expect(all).not.toMatch(/(mem|env|app|ses|tok)_[A-Za-z0-9]{6,}/);
    await page.getByLabel("Kind").selectOption("key");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(async () => (await cells(3)).join(",")).toBe("key.rotate,key.rotate");
    expect((await cells(2))[0]).toBe(OWNER.email);
    // By who: the admin token made the owner and the app in this suite's set-up, and the feature above.
    await page.getByLabel("Kind").selectOption("");
    await page.getByLabel("Who").selectOption({ label: "the admin token" });
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(async () => (await cells(3)).join(",")).toBe("feature.create,app.create,member.create");
    // By feature key, and by date: nothing happened on or before yesterday.
    await page.getByLabel("Who").selectOption("");
    await page.getByLabel("Feature key").fill("audited");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(async () => (await cells(4)).join(",")).toBe("feature audited");
    await page.getByLabel("Feature key").fill("");
    const yesterday = new Date(Date.now() - 86_400_000);
    const day = `${yesterday.getFullYear()}-${String(yesterday.getMonth() + 1).padStart(2, "0")}-${String(yesterday.getDate()).padStart(2, "0")}`;
    await page.getByLabel("On or before").fill(day);
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("No entries match these filters.").waitFor();
    await page.getByLabel("On or before").fill("");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(async () => (await cells(3))[0]).toBe("feature.create");
    await expectNoSeriousA11yViolations(page, "audit log");
    await screenshotWidths(harness, page, "audit");
    expectCleanConsole(errors);
  });
});
