/**
 * Promotion, prerequisites and starting a guarded rollout from the dashboard (API.md §15, §17), in Chromium as an
 * editor uses them, by keyboard where a person would: promote production's rules to development (a direct write,
 * the diff read first) and development's to production (which requires approval: a change request, linked); give
 * express-checkout a prerequisite and see a company lose it through /features/evaluated; a cycle refused in words;
 * start a rollout (a validation message at its field, a warning for a guard event never tracked) and see its page;
 * in production the start becomes a change request. axe-core on every new state; screenshots at 1366 and 390.
 */
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMember } from "../support/accounts.js";
import { adminRequest, request } from "../support/http.js";
import {
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

const ACME = { filter: { type: "context", field: "company.id", operator: "IS", values: ["acme"] } };
const PRO = { filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } };
const ENTERPRISE = { filter: { type: "context", field: "company.plan", operator: "IS", values: ["enterprise"] } };
const EVERYONE = { filter: { type: "constant", value: true } };

describe.runIf(HAS_CHROMIUM)("dashboard promotion, prerequisites and rollout start", () => {
  let harness: Harness;
  let appId: string;
  let production: string;
  let development: string;
  let developmentKey: string;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  const featureUrl = (environmentId: string, key: string) => `${harness.url}/dashboard/#/apps/${appId}/environments/${environmentId}/features/${key}`;
  const read = async (environmentId: string, key: string) => (await adminRequest(harness.server, "GET", `/admin/environments/${environmentId}/features/${key}`)).body;
  const evaluated = async (companyId: string, plan?: string) => {
    const query = new URLSearchParams({ publishableKey: developmentKey, "context.company.id": companyId, ...(plan ? { "context.company.plan": plan } : {}) });
    return (await request(harness.url, "GET", `/features/evaluated?${query}`)).body.features;
  };
  const put = async (path: string, body: unknown) => {
    const reply = await adminRequest(harness.server, "PUT", path, body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  };
  // As drawn (innerText): the tags are upper case on screen, and before/after stand on lines of their own.
  const lines = async (locator: ReturnType<Page["locator"]>) => (await locator.getByRole("listitem").allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("release");
    await createOwner(harness);
    await createMember(harness.url, harness.server.adminToken, "ana@example.com", "editor");
    const app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Shop" })).body.app;
    appId = app.id;
    production = app.environments.find((each: { name: string }) => each.name === "production").id;
    const dev = app.environments.find((each: { name: string }) => each.name === "development");
    development = dev.id;
    developmentKey = dev.publishableKey;
    for (const key of ["checkout", "express-checkout", "huddle"]) await put(`/admin/apps/${appId}/features/${key}`, { description: `The ${key} feature` });
    await put(`/admin/environments/${production}/features/checkout/targeting`, { rules: [ACME] });
    await put(`/admin/environments/${development}/features/checkout/targeting`, { rules: [ENTERPRISE] });
    await put(`/admin/environments/${development}/features/express-checkout/targeting`, { rules: [EVERYONE] });
    await put(`/admin/environments/${development}/features/huddle/targeting`, { rules: [EVERYONE] });
    await put(`/admin/environments/${production}/features/huddle/targeting`, { rules: [EVERYONE] });
    await put(`/admin/environments/${production}/policy`, { requireApproval: true, minApprovals: 1 });
    ({ page, context, errors } = await harness.open());
    await signInByKeyboard(page, harness.url, "ana@example.com", PASSWORD);
  });
  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await harness?.close();
  });

  it("promotes production's rules to development by keyboard: the diff first, then a direct write", async () => {
    await page.goto(featureUrl(production, "checkout"));
    const others = page.getByRole("region", { name: "Other environments" });
    const promote = others.getByRole("button", { name: "Promote to development" });
    await promote.focus();
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Promote checkout to development?" });
    await dialog.waitFor();
    // development's rules now against production's, rule by rule.
    const preview = dialog.getByRole("group", { name: "What changes in development" });
    await preview.getByRole("listitem").first().waitFor();
    expect(await lines(preview)).toEqual(["CHANGED Rule 1 before: company.plan is enterprise after: company.id is acme"]);
    expect(await page.evaluate(() => (document.activeElement as HTMLTextAreaElement | null)?.name)).toBe("comment");
    await page.keyboard.type("acme pilot goes to development too");
    await expectNoSeriousA11yViolations(page, "the promote dialog (direct write)");
    await screenshotWidths(harness, page, "promote-dialog");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Promote to development");
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "detached" });
    await page.getByText("Promoted to development: wrote its targeting (now version 2).").waitFor();
    expect((await read(development, "checkout")).targeting).toEqual({ version: 2, rules: [ACME] });
    const history = (await adminRequest(harness.server, "GET", `/admin/environments/${development}/features/checkout/history`)).body.versions;
    expect(history.at(-1)).toMatchObject({ kind: "targeting", version: 2, comment: "acme pilot goes to development too" });
    // The table shows development's new version.
    await expect.poll(async () => (await others.getByRole("row").filter({ hasText: "development" }).getByRole("cell").allTextContents())[1]).toBe("2");
    await expectNoSeriousA11yViolations(page, "the feature page after a promotion");
    expectCleanConsole(errors);
  });

  it("promoting to production, which requires approval, proposes a change request there and links it", async () => {
    await put(`/admin/environments/${development}/features/checkout/targeting`, { rules: [ACME, PRO] });
    await page.goto(featureUrl(development, "checkout"));
    await page.getByRole("region", { name: "Other environments" }).getByRole("button", { name: "Promote to production" }).click();
    const dialog = page.getByRole("dialog", { name: "Promote checkout to production?" });
    await dialog.getByText("production needs one approval: this opens a change request there; nothing changes until it is applied.").waitFor();
    expect(await lines(dialog.getByRole("group", { name: "What changes in production" }))).toEqual(["UNCHANGED Rule 1: company.id is acme", "ADDED Rule 2: company.plan is pro"]);
    // An editor has no bypass; the request's title is optional.
    expect(await dialog.getByRole("checkbox").count()).toBe(0);
    await dialog.getByLabel("Request title (optional)").fill("Pro companies get checkout");
    await expectNoSeriousA11yViolations(page, "the promote dialog (change request)");
    await dialog.getByRole("button", { name: "Propose promotion" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.getByText("production requires approval, so nothing was written yet").waitFor();
    expect((await read(production, "checkout")).targeting).toEqual({ version: 1, rules: [ACME] });
    const [changeRequest] = (await adminRequest(harness.server, "GET", `/admin/environments/${production}/change-requests`)).body.changeRequests;
    expect(changeRequest).toMatchObject({ title: "Pro companies get checkout", state: "open", changes: [{ feature: "checkout", targeting: { rules: [ACME, PRO] } }] });
    await page.getByRole("link", { name: "Pro companies get checkout" }).click();
    await page.getByRole("heading", { name: "Pro companies get checkout", level: 1 }).waitFor();
    expect(await lines(page.getByRole("region", { name: "checkout", exact: true }))).toEqual(["UNCHANGED Rule 1: company.id is acme", "ADDED Rule 2: company.plan is pro"]);
    expectCleanConsole(errors);
  });

  it("adds a prerequisite by keyboard, and a company for whom checkout is off loses express-checkout", async () => {
    expect((await evaluated("initech"))["express-checkout"]?.isEnabled).toBe(true);
    await page.goto(featureUrl(development, "express-checkout"));
    const card = page.getByRole("region", { name: "Prerequisites" });
    await card.getByText("None: express-checkout depends on no other feature here.").waitFor();
    await card.getByLabel("Feature").focus();
    await card.getByLabel("Feature").selectOption("checkout");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.closest("label")?.textContent)).toContain("Condition");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    const listed = card.getByRole("list").getByRole("listitem");
    expect(await listed.count()).toBe(1);
    expect(await listed.textContent()).toContain("checkout must be on");
    await expectNoSeriousA11yViolations(page, "a prerequisite added, not saved yet");
    await card.getByRole("button", { name: "Save prerequisites" }).click();
    await page.getByText("Prerequisites saved in development (version 1).").waitFor();
    expect((await read(development, "express-checkout")).prerequisites).toEqual([{ feature: "checkout", enabled: true }]);
    // initech is neither acme nor pro: checkout is off for it, so express-checkout is too; a pro company keeps both.
    expect((await evaluated("initech"))["express-checkout"].isEnabled).toBe(false);
    expect((await evaluated("initech", "pro"))["express-checkout"].isEnabled).toBe(true);
    // Where the rules are read, the page says they are not the whole story.
    await page.getByText("Besides its rules, express-checkout is on in development only where checkout is on (its prerequisites).").waitFor();
    await expectNoSeriousA11yViolations(page, "the feature page with a saved prerequisite");
    await screenshotWidths(harness, page, "prerequisites");
    expectCleanConsole(errors);
  });

  it("shows who depends on a feature and refuses a cycle in words, storing nothing", async () => {
    await page.goto(featureUrl(development, "checkout"));
    const card = page.getByRole("region", { name: "Prerequisites" });
    await card.getByText("Depend on checkout here:").waitFor();
    expect((await card.locator("p.small").last().textContent())?.replace(/\s+/g, " ")).toContain("express-checkout (needs it on)");
    await card.getByLabel("Feature").selectOption("express-checkout");
    await card.getByRole("button", { name: "Add prerequisite" }).click();
    await card.getByRole("button", { name: "Save prerequisites" }).click();
    await card.getByRole("alert").getByText("These prerequisites would close a cycle: checkout → express-checkout → checkout").waitFor();
    expect((await read(development, "checkout")).prerequisites).toEqual([]);
    await expectNoSeriousA11yViolations(page, "a refused cycle");
    await screenshotWidths(harness, page, "prerequisite-cycle");
    await card.getByRole("button", { name: "Discard" }).click();
    await card.getByText("None: checkout depends on no other feature here.").waitFor();
    // In production, which requires approval, an editor's save proposes them as a change request; nothing is written.
    await page.goto(featureUrl(production, "checkout"));
    const held = page.getByRole("region", { name: "Prerequisites" });
    await held.getByText("production requires approval: saving proposes these prerequisites as a change request.").waitFor();
    await held.getByLabel("Feature").selectOption("huddle");
    await held.getByRole("button", { name: "Add prerequisite" }).click();
    await held.getByRole("button", { name: "Propose prerequisites" }).click();
    const dialog = page.getByRole("dialog", { name: "Propose checkout's prerequisites in production" });
    await dialog.waitFor();
    await expectNoSeriousA11yViolations(page, "an editor's prerequisites proposal");
    await dialog.getByRole("button", { name: "Propose change request" }).press("Enter");
    await page.getByText("Proposed as change request “Prerequisites of checkout”").waitFor();
    expect((await read(production, "checkout")).prerequisites).toEqual([]);
    const proposals = (await adminRequest(harness.server, "GET", `/admin/environments/${production}/change-requests`)).body.changeRequests;
    const proposal = proposals.find((request: { title: string }) => request.title === "Prerequisites of checkout");
    expect(proposal).toMatchObject({ state: "open", changes: [{ feature: "checkout", prerequisites: [{ feature: "huddle", enabled: true }] }] });
    expect((await adminRequest(harness.server, "POST", `/admin/environments/${production}/change-requests/${proposal.id}/cancel`, {})).status).toBe(200);
    expect(errors.filter((error) => /status of 400/.test(error))).toHaveLength(1);
    expectCleanConsole(errors.filter((error) => !/status of 400/.test(error)));
  });

  it("an owner saves prerequisites where approval is required by bypassing it with a reason the audit log keeps", async () => {
    const owner = await harness.open();
    await signInByKeyboard(owner.page, harness.url, OWNER.email, OWNER.password);
    await owner.page.goto(featureUrl(production, "express-checkout"));
    const card = owner.page.getByRole("region", { name: "Prerequisites" });
    await card.getByLabel("Feature").selectOption("checkout");
    await card.getByLabel("Condition").selectOption("off");
    await card.getByRole("button", { name: "Add prerequisite" }).click();
    await card.getByRole("button", { name: "Save prerequisites" }).click();
    const dialog = owner.page.getByRole("dialog", { name: "Save express-checkout's prerequisites now, without approval?" });
    await dialog.waitFor();
    // The reason is required: an empty submit stays in the dialog and writes nothing.
    await dialog.getByRole("button", { name: "Save, bypassing approval" }).click();
    expect(await dialog.isVisible()).toBe(true);
    await expectNoSeriousA11yViolations(owner.page, "the owner's bypass for prerequisites");
    await owner.page.keyboard.type("hotfix: no express checkout where checkout is on");
    await owner.page.keyboard.press("Enter");
    await owner.page.getByText("Prerequisites saved in production (version 1).").waitFor();
    expect((await read(production, "express-checkout")).prerequisites).toEqual([{ feature: "checkout", enabled: false }]);
    const [entry] = (await adminRequest(harness.server, "GET", "/admin/audit?limit=1")).body.entries;
    expect(entry).toMatchObject({ action: "prerequisites.update", details: { bypass: true, reason: "hotfix: no express checkout where checkout is on" } });
    await card.getByText("checkout must be off").waitFor();
    expectCleanConsole(owner.errors);
    await owner.context.close();
  });

  it("starts a rollout from the rollouts page: a bad step is named at its field, a guard never tracked is warned about", async () => {
    errors.length = 0;
    await page.getByLabel("Environment", { exact: true }).selectOption({ label: "development" });
    await navLink(page, "Rollouts").click();
    await page.getByRole("heading", { name: "Rollouts", level: 1 }).waitFor();
    const picker = page.getByRole("form", { name: "Start a rollout" });
    await picker.getByLabel("Feature to roll out").selectOption("huddle");
    await expectNoSeriousA11yViolations(page, "the rollouts list with its feature picker");
    await screenshotWidths(harness, page, "rollouts-list-picker");
    await picker.getByRole("button", { name: "Start a rollout…" }).click();
    const form = page.getByRole("form", { name: "Start a guarded rollout" });
    await form.waitFor();
    expect(await form.getByLabel("Steps (percent, increasing)").inputValue()).toBe("1, 5, 10, 25, 50, 100");
    const steps = form.getByLabel("Steps (percent, increasing)");
    await steps.fill("50, 10");
    await form.getByLabel("Time per step").fill("2");
    await form.getByLabel("Minimum units per group, each step").fill("40");
    await form.getByRole("button", { name: "Start rollout" }).click();
    await form.getByText("steps must be strictly increasing").waitFor();
    await form.getByRole("alert").getByText("Not started: one field needs fixing, marked above.").waitFor();
    expect(await steps.getAttribute("aria-invalid")).toBe("true");
    await expectNoSeriousA11yViolations(page, "the rollout form with a refused step");
    await screenshotWidths(harness, page, "rollout-form-error");
    await steps.fill("50, 100");
    const guard = form.getByRole("group", { name: "Guard 1" });
    expect(await guard.getByLabel("Event name").inputValue()).toBe("error");
    await guard.getByLabel("Largest change allowed (%)").fill("15");
    await form.getByLabel("Pause at the current step").check();
    await form.getByRole("button", { name: "Start rollout" }).focus();
    await page.keyboard.press("Enter");
    await page.getByText("Rollout started: 50 % of huddle's targeting in development.").waitFor();
    await page.getByText('No "error" event was ever tracked in this environment').waitFor();
    await page.locator(".timeline li[aria-current=step]").getByText("50 %").waitFor();
    expect(await page.getByRole("form", { name: "Start a guarded rollout" }).count()).toBe(0);
    const [rollout] = (await adminRequest(harness.server, "GET", `/admin/environments/${development}/features/huddle/rollouts`)).body.rollouts;
    expect(rollout).toMatchObject({ state: "running", step: 0, percent: 50, stepSeconds: 7200, minExposures: 40, attribute: "company.id", onBreach: "pause", guards: [{ event: "error", direction: "lower_is_better", maxRelativeChange: 0.15, alpha: 0.05 }] });
    await expectNoSeriousA11yViolations(page, "a rollout just started");
    await screenshotWidths(harness, page, "rollout-started");
    expect(errors.filter((error) => /status of 400/.test(error))).toHaveLength(1);
    expectCleanConsole(errors.filter((error) => !/status of 400/.test(error)));
  });

  it("from a feature's page in production, where approval is required, the start becomes a linked change request", async () => {
    errors.length = 0;
    await page.goto(featureUrl(production, "huddle"));
    await page.getByRole("region", { name: "Guarded rollout" }).getByRole("link", { name: "Start a guarded rollout" }).click();
    const form = page.getByRole("form", { name: "Start a guarded rollout" });
    await form.getByText("production requires approval: starting opens a change request; the rollout begins once it is applied.").waitFor();
    await form.getByRole("group", { name: "Guard 1" }).getByRole("button", { name: "Remove guard 1" }).click();
    await form.getByText("No guards: the rollout only waits out its steps.").waitFor();
    await form.getByRole("button", { name: "Propose rollout" }).click();
    await page.getByText("production requires approval, so the rollout starts when change request").waitFor();
    expect((await adminRequest(harness.server, "GET", `/admin/environments/${production}/features/huddle/rollouts`)).body.rollouts).toEqual([]);
    await expectNoSeriousA11yViolations(page, "a rollout proposed as a change request");
    await page.getByRole("link", { name: "Guarded rollout of huddle" }).click();
    await page.getByRole("heading", { name: "Guarded rollout of huddle", level: 1 }).waitFor();
    await page.getByText("Applying starts a rollout: steps 1, 5, 10, 25, 50, 100 %, 1 h each").waitFor();
    await screenshotWidths(harness, page, "rollout-change-request");
    await expectNoSeriousA11yViolations(page, "a change request carrying a rollout");
    expectCleanConsole(errors);
  });

  it("an owner starts a rollout at once where approval is required, with a reason", async () => {
    const owner = await harness.open();
    await signInByKeyboard(owner.page, harness.url, OWNER.email, OWNER.password);
    await put(`/admin/environments/${production}/features/checkout/targeting?bypass=true&reason=setup`, { rules: [ACME, PRO] });
    await owner.page.goto(`${harness.url}/dashboard/#/apps/${appId}/environments/${production}/rollouts/checkout`);
    const form = owner.page.getByRole("form", { name: "Start a guarded rollout" });
    await form.getByLabel("Steps (percent, increasing)").fill("10, 100");
    await form.getByLabel("Time unit").selectOption("days");
    await form.getByLabel(/^Unit/).selectOption("user.id");
    await form.getByLabel("As an owner, start now without approval").check();
    await form.getByLabel("Reason (required)").fill("incident follow-up");
    await expectNoSeriousA11yViolations(owner.page, "the rollout form with an owner's bypass");
    await form.getByRole("button", { name: "Start rollout" }).click();
    await owner.page.getByText("Rollout started: 10 % of checkout's targeting in production.").waitFor();
    const [rollout] = (await adminRequest(harness.server, "GET", `/admin/environments/${production}/features/checkout/rollouts`)).body.rollouts;
    expect(rollout).toMatchObject({ state: "running", percent: 10, stepSeconds: 86_400, attribute: "user.id" });
    const started = (await adminRequest(harness.server, "GET", "/admin/audit?limit=5")).body.entries.find((entry: { action: string }) => entry.action === "rollout.started");
    expect(started).toMatchObject({ details: { bypass: true, reason: "incident follow-up" } });
    // The feature page's card now points at the running rollout.
    await owner.page.goto(featureUrl(production, "checkout"));
    await owner.page.getByRole("region", { name: "Guarded rollout" }).getByRole("link", { name: "Rollout running at 10 % (step 1 of 2)" }).waitFor();
    expectCleanConsole(owner.errors);
    await owner.context.close();
  });
});
