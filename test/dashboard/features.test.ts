/**
 * Features area in Chromium: the list shows each environment's state (off / some / everyone) side by side and the
 * last change with who made it; search and sort; create and archive from the page; an editor sees the same list.
 */
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMember, signIn } from "../support/accounts.js";
import { adminRequest } from "../support/http.js";
import { asSession } from "../support/accounts.js";
import { navLink, confirmInDialog, screenshotWidths, createOwner, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, OWNER, screenshot, signInByKeyboard, startHarness, type Harness, keepPagesOfFailedTests } from "./support.js";

describe.runIf(HAS_CHROMIUM)("dashboard features list", () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let appId: string;
  let production: string;
  let development: string;

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("features");
    await createOwner(harness);
    const app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    appId = app.id;
    production = app.environments.find((each: { name: string }) => each.name === "production").id;
    development = app.environments.find((each: { name: string }) => each.name === "development").id;
    for (const [key, stage, description] of [["alpha-search", "Internal", "Search that finds"], ["beta-huddle", "Beta", "Huddles"], ["ga-export", "General availability", "CSV export"]]) {
      await adminRequest(harness.server, "PUT", `/admin/apps/${appId}/features/${key}`, { stage, description });
    }
    // beta-huddle: some in production (made by the owner's session), everyone in development (by the admin token).
    const session = await signIn(harness.url, OWNER.email);
    const put = await asSession(harness.url, session, "PUT", `/admin/environments/${production}/features/beta-huddle/targeting`, {
      rules: [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }],
    });
    expect(put.status).toBe(200);
    await adminRequest(harness.server, "PUT", `/admin/environments/${development}/features/beta-huddle/targeting`, { rules: [{ filter: { type: "constant", value: true } }] });
    await adminRequest(harness.server, "PUT", `/admin/environments/${production}/features/ga-export/targeting`, {
      rules: [{ filter: { type: "rolloutPercentage", key: "ga-export", partialRolloutAttribute: "company.id", partialRolloutThreshold: 100000 } }],
    });
    ({ page, context, errors } = await harness.open());
  });
  afterAll(async () => {
    await context?.close();
    await harness?.close();
  });

  const rowOf = (key: string) => page.getByRole("row").filter({ has: page.getByRole("link", { name: key, exact: true }) });
  const cellTexts = async (key: string) => (await rowOf(key).getByRole("cell").allTextContents()).map((text) => text.trim());

  it("shows each environment's state side by side and the last change with who made it", async () => {
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
    await page.getByRole("link", { name: "beta-huddle" }).waitFor();
    const headers = (await page.getByRole("columnheader").allTextContents()).map((text) => text.trim());
    expect(headers.slice(0, 6)).toEqual(["Feature ▲", "Stage", "production", "development", "Served in production", "Last change"]);
    expect((await cellTexts("beta-huddle")).slice(1, 4)).toEqual(["Beta", "some", "everyone"]);
    expect((await cellTexts("ga-export")).slice(1, 4)).toEqual(["General availability", "everyone", "off"]);
    expect((await cellTexts("alpha-search")).slice(2, 6)).toEqual(["off", "off", "On", "never targeted"]);
    expect((await cellTexts("beta-huddle"))[5]).toContain(`by ${OWNER.email}`);
    await expectNoSeriousA11yViolations(page, "features list");
    await screenshot(harness, page, "features-list");

    // The environment switcher changes whose last change is shown: development's was made by the admin token.
    await page.getByLabel("Environment", { exact: true }).selectOption({ label: "development" });
    await page.waitForFunction(() => document.body.textContent?.includes("by admin token"));
    expect((await cellTexts("beta-huddle"))[5]).toContain("by admin token");
    // A state in another environment's column opens the feature there.
    await rowOf("beta-huddle").getByRole("link", { name: "some in production" }).click();
    await page.getByRole("heading", { name: /Targeting in production/ }).waitFor();
    expect(decodeURIComponent(new URL(page.url()).hash)).toBe(`#/apps/${appId}/environments/${production}/features/beta-huddle`);
    await page.goBack();
    await page.getByRole("link", { name: "beta-huddle" }).waitFor();
  });

  it("searches and sorts", async () => {
    await page.getByLabel("Search features").fill("huddle");
    await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 1);
    expect(await page.getByText("1 feature", { exact: true }).count()).toBe(1);
    await page.getByLabel("Search features").fill("");
    await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 3);
    const keys = async () => page.locator("tbody tr td:first-child a").allTextContents();
    expect(await keys()).toEqual(["alpha-search", "beta-huddle", "ga-export"]);
    // Sorting by keyboard: focus the column's button and press Enter, twice for descending.
    await page.getByRole("button", { name: /^Feature/ }).focus();
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector("tbody tr td a")?.textContent === "ga-export");
    expect(await keys()).toEqual(["ga-export", "beta-huddle", "alpha-search"]);
    expect(await page.getByRole("columnheader", { name: /Feature/ }).getAttribute("aria-sort")).toBe("descending");
    await page.getByRole("button", { name: /^Stage/ }).click();
    expect(await keys()).toEqual(["beta-huddle", "ga-export", "alpha-search"]);
  });

  it("creates a feature and archives one from the page", async () => {
    await page.getByRole("button", { name: "New feature" }).click();
    await page.getByLabel("Key", { exact: true }).fill("new-thing");
    await page.getByLabel("Name", { exact: true }).fill("New thing");
    await page.getByLabel("Description").fill("Made in the browser");
    // The stage is one of the app's release stages, chosen, not typed: a new feature starts with its targeting.
    await page.getByLabel("Release stage").selectOption({ label: "Beta" });
    await page.getByRole("button", { name: "Create feature" }).click();
    // The feature page is titled with the name, the key beside it.
    await page.getByRole("heading", { name: "New thing", level: 1 }).waitFor();
    expect(await page.getByTestId("feature-key").textContent()).toBe("new-thing");
    const listed = (await adminRequest(harness.server, "GET", `/admin/apps/${appId}/features`)).body.features;
    expect(listed.find((feature: { key: string }) => feature.key === "new-thing")).toMatchObject({ name: "New thing", description: "Made in the browser", stage: "Beta", stageId: "st_beta" });
    const stages = (await adminRequest(harness.server, "GET", `/admin/apps/${appId}/stages`)).body.stages;
    expect(stages.find((stage: { name: string }) => stage.name === "Beta").features).toContain("new-thing");
    const developmentTargeting = (await adminRequest(harness.server, "GET", `/admin/environments/${development}/features/new-thing`)).body.targeting;
    expect(developmentTargeting.rules).toEqual([{ filter: { type: "constant", value: true } }]);

    await navLink(page, "Features").click();
    await page.getByRole("button", { name: "Archive alpha-search" }).click();
    // The page asks in its own dialog, which names the action; Escape (or Cancel) keeps the feature, and focus returns.
    await page.getByRole("dialog").waitFor();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Cancel");
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe("Archive alpha-search");
    expect(await page.getByRole("link", { name: "alpha-search" }).count()).toBe(1);
    await page.getByRole("button", { name: "Archive alpha-search" }).click();
    await expectNoSeriousA11yViolations(page, "archive dialog");
    await confirmInDialog(page, "Archive feature");
    await page.waitForFunction(() => !document.body.textContent?.includes("alpha-search"));
    const after = (await adminRequest(harness.server, "GET", `/admin/apps/${appId}/features`)).body.features.map((feature: { key: string }) => feature.key);
    expect(after).toEqual(["beta-huddle", "ga-export", "new-thing"]);
    // A feature with a display name is listed by it, its key beside it.
    await page.getByRole("link", { name: "New thing" }).waitFor();
  });

  it("shows an existing key as an error instead of overwriting it", async () => {
    await page.getByRole("button", { name: "New feature" }).click();
    await page.getByLabel("Key", { exact: true }).fill("beta-huddle");
    await page.getByRole("button", { name: "Create feature" }).click();
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("exists already");
    await page.getByRole("button", { name: "Cancel" }).click();
    await screenshotWidths(harness, page, "features");
    expectCleanConsole(errors);
  });

  it("lets an editor see the list too", async () => {
    await createMember(harness.url, harness.server.adminToken, "eddie@example.com", "editor");
    const { page: editorPage, context: editorContext } = await harness.open();
    await signInByKeyboard(editorPage, harness.url, "eddie@example.com", OWNER.password);
    await editorPage.getByRole("link", { name: "beta-huddle" }).waitFor();
    expect(await editorPage.getByRole("link", { name: "Members" }).count()).toBe(0);
    await editorContext.close();
  });
});
