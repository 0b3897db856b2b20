/**
 * Links in Chromium (docs/API.md §9, §10): every page's URL names its app and environment; a signed-out visit to a
 * feature of an app that is not the newest leads through sign-in back to it; reload, back and forward; unknown app,
 * environment and feature get a not-found page at their URL; the Reflag CLI's links (`/envs/…/features/…`) redirect
 * to the feature's page and `/cli-login/success` says the CLI is signed in. Then the feature page's structure: its
 * name as title, tabs to switch between by keyboard, the stage chosen from the app's release stages, other
 * environments linking to their page.
 */
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { adminRequest, request } from "../support/http.js";
import { reflagProject, REFLAG_CLI, runReflag } from "../support/reflag-cli.js";
import {
  confirmInDialog,
  createOwner,
  expectCleanConsole,
  expectNoSeriousA11yViolations,
  fillSignIn,
  HAS_CHROMIUM,
  keepPagesOfFailedTests,
  navLink,
  OWNER,
  screenshotWidths,
  startHarness,
  type Harness,
} from "./support.js";

interface AppAnswer {
  id: string;
  defaultEnvironmentId: string;
  environments: { id: string; name: string; publishableKey: string }[];
}

describe.runIf(HAS_CHROMIUM)("dashboard links and the feature page", () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let acme: AppAnswer;
  let development: string;
  let production: string;
  let featureId: string;

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("links");
    await createOwner(harness);
    acme = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    production = acme.environments.find((each) => each.name === "production")!.id;
    development = acme.environments.find((each) => each.name === "development")!.id;
    featureId = (await adminRequest(harness.server, "PUT", `/admin/apps/${acme.id}/features/huddle`, { name: "Huddle calls", description: "Calls in a huddle" })).body.feature.id;
    await adminRequest(harness.server, "PUT", `/admin/environments/${development}/features/huddle/targeting`, { rules: [{ filter: { type: "constant", value: true } }] });
    // A newer app: before §9 URLs, sign-in opened the newest app, whatever the link named.
    await adminRequest(harness.server, "POST", "/admin/apps", { name: "Zed" });
    ({ page, context, errors } = await harness.open());
  });
  afterAll(async () => {
    await context?.close();
    await harness?.close();
  });

  const featureUrl = (environmentId: string, key = "huddle", appId = acme.id) => `${harness.url}/dashboard/#/apps/${appId}/environments/${environmentId}/features/${key}`;
  const hash = () => decodeURIComponent(new URL(page.url()).hash);

  it("leads a signed-out visit to a feature of another app through sign-in back to it, by keyboard", async () => {
    await page.goto(featureUrl(development));
    await fillSignIn(page, OWNER.email, OWNER.password);
    await page.getByRole("heading", { name: "Huddle calls", level: 1 }).waitFor();
    expect(hash()).toBe(`#/apps/${acme.id}/environments/${development}/features/huddle`);
    // The page names its app and environment, and shows that environment's rules.
    expect(await page.getByLabel("App", { exact: true }).evaluate((select: HTMLSelectElement) => select.selectedOptions[0]?.textContent)).toBe("Acme");
    expect(await page.getByLabel("Environment", { exact: true }).evaluate((select: HTMLSelectElement) => select.selectedOptions[0]?.textContent)).toBe("development");
    await page.getByRole("heading", { name: /Targeting in development/ }).waitFor();
    await page.getByRole("group", { name: "Rule 1", exact: true }).waitFor();
    expect(await page.getByRole("alert").count()).toBe(0);
    await expectNoSeriousA11yViolations(page, "feature page after sign-in");
    await screenshotWidths(harness, page, "feature-page");
  });

  it("keeps the page on reload, and goes back and forward between pages", async () => {
    await page.reload();
    await page.getByRole("heading", { name: "Huddle calls", level: 1 }).waitFor();
    expect(hash()).toBe(`#/apps/${acme.id}/environments/${development}/features/huddle`);
    await navLink(page, "Keys & SDKs").click();
    await page.getByRole("heading", { name: "Keys and SDK set-up" }).waitFor();
    expect(hash()).toBe(`#/apps/${acme.id}/environments/${development}/keys`);
    await page.goBack();
    await page.getByRole("heading", { name: "Huddle calls", level: 1 }).waitFor();
    await page.goForward();
    await page.getByRole("heading", { name: "Keys and SDK set-up" }).waitFor();
    // Switching the environment keeps the page and changes the URL.
    await page.getByLabel("Environment", { exact: true }).selectOption({ label: "production" });
    await expect.poll(hash).toBe(`#/apps/${acme.id}/environments/${production}/keys`);
    expect(await page.getByTestId("publishable-key").textContent()).toBe(acme.environments.find((each) => each.id === production)!.publishableKey);
  });

  it("opens /dashboard/ alone, and a link from before §9, at the default app's URL", async () => {
    await page.goto(`${harness.url}/dashboard/`);
    await page.getByRole("heading", { name: "Features", level: 1 }).waitFor();
    await expect.poll(hash).toMatch(/^#\/apps\/app_\w+\/environments\/env_\w+\/features$/);
    await page.goto(`${harness.url}/dashboard/#/features/huddle`);
    await page.getByRole("heading", { name: "Huddle calls", level: 1 }).waitFor();
    await expect.poll(hash).toMatch(new RegExp(`^#/apps/${acme.id}/environments/env_\\w+/features/huddle$`));
  });

  it("shows a not-found page at the URL of an unknown app, environment or feature", async () => {
    await page.goto(`${harness.url}/dashboard/#/apps/app_missing1234/environments/${development}/features`);
    await page.getByRole("heading", { name: "App not found" }).waitFor();
    await page.goto(`${harness.url}/dashboard/#/apps/${acme.id}/environments/env_missing/features`);
    await page.getByRole("heading", { name: "Environment not found" }).waitFor();
    await page.goto(featureUrl(development, "no-such-feature"));
    await page.getByRole("heading", { name: "Feature not found" }).waitFor();
    expect(await page.getByText("Acme has no feature").count()).toBe(1);
    await expectNoSeriousA11yViolations(page, "feature not found");
    await page.getByRole("link", { name: "See the features of Acme" }).click();
    await page.getByRole("link", { name: "Huddle calls" }).waitFor();
  });

  it("follows the Reflag CLI's links: /envs/<env>/features/<feature> to the feature's page, /cli-login/success to a page", async () => {
    // `reflag flags create` prints <base>/envs/<slug>-<envId>/features/<slug>-<featureId>.
    const direct = await fetch(`${harness.url}/envs/development-${development}/features/huddle-calls-${featureId}`, { redirect: "manual" });
    expect(direct.status).toBe(302);
    expect(direct.headers.get("location")).toBe(`/dashboard/#/apps/${acme.id}/environments/${development}/features/huddle`);
    await page.goto(`${harness.url}/envs/development-${development}/features/huddle-calls-${featureId}`);
    await page.getByRole("heading", { name: "Huddle calls", level: 1 }).waitFor();
    expect(hash()).toBe(`#/apps/${acme.id}/environments/${development}/features/huddle`);
    await page.goto(`${harness.url}/envs/production-${production}`);
    await page.getByRole("heading", { name: "Features", level: 1 }).waitFor();
    expect(hash()).toBe(`#/apps/${acme.id}/environments/${production}/features`);
    expect((await request(harness.url, "GET", `/envs/development-${development}/features/gone-feat_nope`)).status).toBe(404);
    expect((await request(harness.url, "GET", "/envs/nowhere-env_nope/features/x")).status).toBe(404);

    // `reflag login` ends the browser on /cli-login/success.
    await page.goto(`${harness.url}/cli-login/success`);
    await page.getByRole("heading", { name: "The CLI is signed in" }).waitFor();
    await expectNoSeriousA11yViolations(page, "CLI signed-in page");
    await screenshotWidths(harness, page, "cli-login-success");
    await page.goto(`${harness.url}/cli-login/error?error=${encodeURIComponent("<b>denied</b>")}`);
    await page.getByRole("heading", { name: "The CLI could not sign in" }).waitFor();
    expect(await page.getByRole("alert").textContent()).toBe("<b>denied</b>");
  });

  it("titles the feature page with its name, its key beside it, and switches between its tabs by keyboard", async () => {
    await page.goto(featureUrl(production));
    await page.getByRole("heading", { name: "Huddle calls", level: 1 }).waitFor();
    expect(await page.getByTestId("feature-key").textContent()).toBe("huddle");
    const tabs = page.getByRole("tablist", { name: "Sections of this feature" });
    expect(await tabs.getByRole("tab").allTextContents()).toEqual(["Targeting and config", "Adoption", "History"]);
    expect(await page.getByRole("heading", { name: /Targeting in production/ }).isVisible()).toBe(true);
    // Arrow keys move between tabs and show each one's panel (the WAI-ARIA tabs pattern).
    await tabs.getByRole("tab", { name: "Targeting and config" }).focus();
    await page.keyboard.press("ArrowRight");
    await page.getByRole("heading", { name: "Adoption and satisfaction" }).waitFor();
    await page.keyboard.press("ArrowRight");
    await page.getByRole("heading", { name: "History" }).waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("History");
    expect(await page.getByRole("heading", { name: /Targeting in production/ }).isVisible()).toBe(false);
    await expectNoSeriousA11yViolations(page, "feature page, history tab");
    await page.keyboard.press("Home");
    await page.getByRole("heading", { name: /Targeting in production/ }).waitFor();
    // The URL still names the feature: a tab is not a route.
    expect(hash()).toBe(`#/apps/${acme.id}/environments/${production}/features/huddle`);
  });

  it("links the other environments to their page of the feature", async () => {
    const others = page.getByRole("region", { name: "Other environments" });
    await others.getByRole("link", { name: "development" }).click();
    await page.getByRole("heading", { name: /Targeting in development/ }).waitFor();
    expect(hash()).toBe(`#/apps/${acme.id}/environments/${development}/features/huddle`);
  });

  it("chooses the stage from the app's release stages, saying what each environment gets", async () => {
    const stage = page.getByRole("form", { name: "Release stage" });
    const options = await stage.getByLabel("Release stage").locator("option").allTextContents();
    expect(options).toEqual(["no stage", "In development", "Internal", "Beta", "General availability"]);
    await stage.getByLabel("Release stage").selectOption({ label: "General availability" });
    await stage.getByRole("button", { name: "Move to stage" }).click();
    const dialog = page.getByRole("dialog");
    expect(await dialog.textContent()).toContain("production: everyone; development: everyone");
    await confirmInDialog(page, "Move to General availability");
    await page.getByText("Moved to General availability.").waitFor();
    const feature = (await adminRequest(harness.server, "GET", `/admin/apps/${acme.id}/features`)).body.features[0];
    expect(feature).toMatchObject({ key: "huddle", stage: "General availability", stageId: "st_general_availability" });
    const stages = (await adminRequest(harness.server, "GET", `/admin/apps/${acme.id}/stages`)).body.stages;
    expect(stages.find((each: { name: string }) => each.name === "General availability").features).toEqual(["huddle"]);
    await page.getByText("General availability", { exact: true }).first().waitFor();
    await expectNoSeriousA11yViolations(page, "feature page with a stage");
    await screenshotWidths(harness, page, "feature-page-stage");
    expectCleanConsole(errors);
  });

  it("approves an editor's OAuth request in one click when signed in, on a page in the dashboard's style", async () => {
    const callback = "http://127.0.0.1:9/callback";
    const clientId = (await request(harness.url, "POST", "/api/mcp/oauth/register", { body: { client_name: "Code editor", redirect_uris: [callback] } })).body.client_id as string;
    const verifier = "v".repeat(64);
    const { createHash } = await import("node:crypto");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const authorize = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: callback, code_challenge: challenge, code_challenge_method: "S256", state: "s1" });
    // The editor's loopback listener, standing in for the real one: the browser lands there with the code.
    let landed: URL | undefined;
    await page.route(`${callback}**`, (route) => ((landed = new URL(route.request().url())), route.fulfill({ status: 200, contentType: "text/plain", body: "back in the editor" })));
    await page.goto(`${harness.url}/api/mcp/oauth/authorize?${authorize}`);
    await page.getByRole("heading", { name: "Approve Code editor" }).waitFor();
    expect(await page.getByText(`Signed in as ${OWNER.email}.`).count()).toBe(1);
    // No password asked of someone signed in (the other account's form stays folded away).
    expect(await page.getByLabel("Password").isVisible()).toBe(false);
    await expectNoSeriousA11yViolations(page, "OAuth approval page, signed in");
    await screenshotWidths(harness, page, "oauth-approve");
    await page.getByRole("button", { name: `Approve as ${OWNER.email}` }).focus();
    const [arrived] = await Promise.all([page.waitForRequest((sent) => sent.url().startsWith(callback)), page.keyboard.press("Enter")]);
    landed = new URL(arrived.url());
    expect(landed.searchParams.get("state")).toBe("s1");
    const exchanged = await request(harness.url, "POST", "/api/mcp/oauth/token", {
      rawBody: new URLSearchParams({ grant_type: "authorization_code", code: landed!.searchParams.get("code")!, client_id: clientId, redirect_uri: callback, code_verifier: verifier }).toString(),
      contentType: "application/x-www-form-urlencoded",
    });
    expect(exchanged.status).toBe(200);
    // Still CSRF-protected: a form without this session's token is refused.
    const forged = await fetch(`${harness.url}/api/mcp/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: harness.url },
      body: new URLSearchParams({ ...Object.fromEntries(authorize), csrf: "forged", decision: "approve" }).toString(),
    });
    expect(forged.status).toBe(403);
    await page.unroute(`${callback}**`);
  });

  it("signs the Reflag CLI in with `reflag login`, approved in the browser, and the CLI then works without an API key", async () => {
    const project = reflagProject(harness.url, acme.id);
    // The CLI opens its login URL with xdg-open, which runs $BROWSER: `true` opens nothing, and this page goes there.
    const cli = spawn(process.execPath, [REFLAG_CLI, "login"], { cwd: project, env: { PATH: process.env.PATH ?? "", HOME: project, NO_COLOR: "1", BROWSER: "true" } });
    const exited = new Promise<number | null>((resolve) => cli.on("exit", resolve));
    let output = "";
    cli.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    cli.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    try {
      await expect.poll(() => /login: (\S+)/.exec(output)?.[1], { timeout: 10_000 }).toBeDefined();
      const loginUrl = /login: (\S+)/.exec(output)![1]!;
      expect(new URL(loginUrl).origin).toBe(harness.url);
      await page.goto(loginUrl);
      await page.getByRole("heading", { name: "Approve Reflag CLI" }).waitFor();
      await page.getByRole("button", { name: `Approve as ${OWNER.email}` }).click();
      // The CLI's loopback listener takes the code, exchanges it and sends the browser on to the service's page.
      await page.getByRole("heading", { name: "The CLI is signed in" }).waitFor();
      expect(await exited).toBe(0);
    } finally {
      cli.kill();
    }
    const listed = await runReflag(project, undefined, ["apps", "list"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("Acme");
    rmSync(project, { recursive: true, force: true });
  });
});
