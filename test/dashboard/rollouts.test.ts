/**
 * The rollout pages in Chromium over a rollout the real service is driving: the environment's rollouts listed; a
 * feature's rollout with its steps as a timeline, exposures per group, each guard's estimate and interval (drawn with
 * uPlot and listed), pause and resume from the page; axe-clean, screenshotted, no console errors.
 */
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRequest } from "../support/http.js";
import { seededRandom, sendRound } from "../support/rollouts.js";
import { createOwner, dashboardSettled, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, keepPagesOfFailedTests, navLink, OWNER, screenshot, signInByKeyboard, startHarness, type Harness } from "./support.js";

describe.runIf(HAS_CHROMIUM)("dashboard rollouts", () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let rolloutId: string;
  let environmentId: string;

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("rollouts");
    await createOwner(harness);
    const app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    const production = app.environments.find((each: { name: string }) => each.name === "production");
    environmentId = production.id;
    await adminRequest(harness.server, "PUT", `/admin/apps/${app.id}/features/huddle`, { name: "Huddles" });
    await adminRequest(harness.server, "PUT", `/admin/environments/${environmentId}/features/huddle/targeting`, { rules: [{ filter: { type: "constant", value: true } }] });
    // An hour a step: the rollout stays on its first step while the page is looked at.
    const started = await adminRequest(harness.server, "POST", `/admin/environments/${environmentId}/features/huddle/rollouts`, {
      steps: [50, 100],
      stepSeconds: 3600,
      minExposures: 40,
      guards: [
        { event: "error", direction: "lower_is_better", maxRelativeChange: 0.1 },
        { event: "converted", direction: "higher_is_better", maxRelativeChange: 0.2 },
      ],
    });
    rolloutId = started.body.rollout.id;
    const random = seededRandom(5);
    for (let round = 0; round < 2; round++) {
      await sendRound(harness.server, production.secretKey, "huddle", { rates: { error: { exposed: 0.3, control: 0.3 }, converted: { exposed: 0.2, control: 0.2 } }, plan: () => "pro" }, 150, random, `r${round}`);
    }
    ({ page, context, errors } = await harness.open());
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    await harness?.close();
  });

  it("lists the environment's rollouts and shows one: timeline, exposures, guard intervals", async () => {
    await navLink(page, "Rollouts").click();
    await page.getByRole("link", { name: "huddle" }).waitFor();
    expect(await page.locator("tbody tr").first().textContent()).toMatch(/huddle\s*running\s*1 of 2 \(50 %\)/);
    await expectNoSeriousA11yViolations(page, "rollouts list");
    await page.getByRole("link", { name: "huddle" }).click();
    await page.getByRole("heading", { name: "Rollout of huddle" }).waitFor();
    await dashboardSettled(page);
    const api = (await adminRequest(harness.server, "GET", `/admin/environments/${environmentId}/features/huddle/rollouts/${rolloutId}`)).body.rollout;
    const current = page.locator(".timeline li[aria-current=step]");
    expect(await current.textContent()).toContain(`exposed ${api.steps[0].exposures.exposed}, control ${api.steps[0].exposures.control}`);
    expect(api.steps[0].exposures.exposed).toBeGreaterThanOrEqual(30);
    const errorRow = page.getByRole("row", { name: /^error/ });
    expect(await errorRow.textContent()).toContain(`${api.guards[0].estimate >= 0 ? "+" : "−"}${Math.abs(api.guards[0].estimate * 100).toFixed(1)} %`);
    // The intervals are drawn: a uPlot canvas inside the guards' figure.
    expect(await page.locator("section[aria-labelledby=rollout-guards] figure canvas").count()).toBeGreaterThan(0);
    await expectNoSeriousA11yViolations(page, "rollout detail");
    await screenshot(harness, page, "rollout-detail");
  });

  it("pauses and resumes from the page", async () => {
    await page.getByRole("button", { name: "Pause" }).click();
    await page.getByText("Rollout paused.").waitFor();
    expect((await adminRequest(harness.server, "GET", `/admin/environments/${environmentId}/features/huddle/rollouts/${rolloutId}`)).body.rollout.state).toBe("paused");
    await page.getByRole("button", { name: "Resume" }).click();
    await page.getByText("Rollout running.").waitFor();
    expect((await adminRequest(harness.server, "GET", `/admin/environments/${environmentId}/features/huddle/rollouts/${rolloutId}`)).body.rollout.state).toBe("running");
    expectCleanConsole(errors);
  });
});
