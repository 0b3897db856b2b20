/**
 * Companies, users, feedback and adoption in Chromium, over data tracked through the real tracking API: 60 companies
 * paged from the server with a prefix search; a company's attributes, users, features with their adoption state and
 * its feedback; the feedback list filtered by feature and score; a feature's funnel, weekly chart and company states.
 */
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRequest, request } from "../support/http.js";
import { navLink, createOwner, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, OWNER, screenshot, signInByKeyboard, startHarness, type Harness, keepPagesOfFailedTests } from "./support.js";

const DAY_MS = 86_400_000;
const ids = Array.from({ length: 60 }, (_, index) => `c-${String(index).padStart(3, "0")}`);

describe.runIf(HAS_CHROMIUM)("dashboard companies, feedback and adoption", () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("analytics");
    await createOwner(harness);
    const app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    const key = app.environments.find((each: { name: string }) => each.name === "production").publishableKey;
    for (const feature of ["huddle", "export"]) await adminRequest(harness.server, "PUT", `/admin/apps/${app.id}/features/${feature}`, { description: feature });
    const now = Date.now();
    const items = [
      ...ids.map((companyId) => ({ type: "company", companyId, userId: `u-${companyId}`, attributes: { name: `Company ${companyId}`, plan: "pro" } })),
      // c-001 uses huddle on two days (adopted); c-002 once (tried).
      { type: "event", event: "huddle", userId: "u-c-001", companyId: "c-001", timestamp: new Date(now - DAY_MS).toISOString() },
      { type: "event", event: "huddle", userId: "u-c-001", companyId: "c-001", timestamp: new Date(now).toISOString() },
      { type: "event", event: "huddle", userId: "u-c-002", companyId: "c-002", timestamp: new Date(now).toISOString() },
      { type: "feedback", userId: "u-c-001", companyId: "c-001", key: "huddle", score: 5, comment: "Love huddles" },
      { type: "feedback", userId: "u-c-002", companyId: "c-002", key: "huddle", score: 2, comment: "Too loud" },
      { type: "feedback", userId: "u-c-003", companyId: "c-003", key: "export", score: 4, comment: "Handy" },
    ];
    const bulk = await request(harness.url, "POST", "/bulk", { headers: { authorization: `Bearer ${key}` }, body: items });
    expect(bulk.status).toBe(200);
    ({ page, context, errors } = await harness.open());
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
  });
  afterAll(async () => {
    await context?.close();
    await harness?.close();
  });

  const companyLinks = () => page.locator("tbody tr td:first-child a").allTextContents();

  it("pages through companies from the server and searches by prefix", async () => {
    await navLink(page, "Companies").click();
    await page.getByRole("link", { name: "c-049" }).waitFor();
    expect(await companyLinks()).toEqual(ids.slice(0, 50));
    await page.getByRole("button", { name: "Next page" }).click();
    await page.getByRole("link", { name: "c-059" }).waitFor();
    expect(await companyLinks()).toEqual(ids.slice(50));
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    await page.getByLabel("Company id starts with").fill("c-02");
    await page.getByRole("link", { name: "c-020" }).waitFor();
    expect(await companyLinks()).toEqual(ids.slice(20, 30));
    await expectNoSeriousA11yViolations(page, "companies list");
    await screenshot(harness, page, "companies");
  });

  it("lists users too, searched by prefix", async () => {
    await navLink(page, "Users").click();
    await page.getByRole("link", { name: "u-c-049" }).waitFor();
    expect(await companyLinks()).toEqual(ids.slice(0, 50).map((id) => `u-${id}`));
    await page.getByLabel("User id starts with").fill("u-c-05");
    await page.getByRole("link", { name: "u-c-059" }).waitFor();
    expect(await companyLinks()).toEqual(ids.slice(50).map((id) => `u-${id}`));
    await expectNoSeriousA11yViolations(page, "users list");
    await screenshot(harness, page, "users");
    await navLink(page, "Companies").click();
    await page.getByRole("link", { name: "c-049" }).waitFor();
  });

  it("shows a company's attributes, users, feature states and feedback", async () => {
    await page.getByLabel("Company id starts with").fill("c-001");
    await page.getByRole("link", { name: "c-001" }).click();
    await page.getByRole("heading", { name: "Company c-001" }).waitFor();
    // The company's users, and the user of each feedback entry, link to the user's page.
    await page.getByRole("link", { name: "u-c-001" }).first().waitFor();
    // Text attributes read as text, not JSON-quoted.
    expect(await page.getByRole("row", { name: /^name/ }).textContent()).toBe("nameCompany c-001");
    const huddle = page.getByRole("row").filter({ has: page.getByRole("link", { name: "huddle", exact: true }) });
    expect(await huddle.getByRole("cell").nth(1).textContent()).toBe("retained");
    expect(await page.getByRole("cell", { name: "Love huddles" }).count()).toBe(1);
    expect(await page.getByRole("cell", { name: "Too loud" }).count()).toBe(0);
    await expectNoSeriousA11yViolations(page, "company detail");
    await screenshot(harness, page, "company");
    await page.getByRole("link", { name: "u-c-001" }).first().click();
    await page.getByRole("heading", { name: "User u-c-001" }).waitFor();
    await page.getByRole("link", { name: "c-001" }).first().waitFor();
    expect(await page.getByText("No attributes.").count()).toBe(1);
    // The features this user gets, as an SDK sees them, each linking to its page.
    const features = page.getByRole("region", { name: "Features for this user" });
    await features.getByRole("link", { name: "huddle" }).waitFor();
    expect(await features.getByRole("row").filter({ has: page.getByRole("link", { name: "huddle" }) }).getByRole("cell").nth(1).textContent()).toMatch(/^(on|off)$/);
    expect(await page.getByRole("cell", { name: "Love huddles" }).count()).toBe(1);
    await expectNoSeriousA11yViolations(page, "user detail");
    await screenshot(harness, page, "user");
  });

  it("lists feedback and filters it by feature and score", async () => {
    await navLink(page, "Feedback").click();
    await page.getByText("3 of 3").waitFor();
    await page.getByLabel("Feature").selectOption("huddle");
    await page.getByText("2 of 3").waitFor();
    await page.getByLabel("Score").selectOption("2");
    await page.getByText("1 of 3").waitFor();
    expect(await page.locator("tbody tr").textContent()).toContain("Too loud");
    await expectNoSeriousA11yViolations(page, "feedback");
    await screenshot(harness, page, "feedback");
  });

  it("shows a feature's funnel, weekly chart and company states", async () => {
    await navLink(page, "Features").click();
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "huddle", exact: true }) });
    // Tried and adopted are the analytics API's exclusive states: c-002 tried, c-001 adopted.
    await expect.poll(async () => (await row.getByRole("cell").allTextContents()).map((text) => text.trim()).slice(-3, -1)).toEqual(["1", "1"]);
    await page.getByRole("link", { name: "huddle", exact: true }).click();
    await page.getByRole("tab", { name: "Adoption" }).click();
    const funnel = page.getByTestId("funnel");
    await funnel.waitFor();
    // "Try it" offers the tracked companies and users to pick from.
    await expect.poll(() => page.locator("#tracked-companies option").count()).toBe(60);
    expect(await page.locator("#tracked-users option").count()).toBe(60);
    const figures = Object.fromEntries(
      await funnel.locator("div").evaluateAll((boxes) => boxes.map((box) => [box.querySelector("dt")!.textContent, box.querySelector("dd")!.textContent])),
    );
    expect(figures).toMatchObject({ "Not used": "58", tried: "1", adopted: "1", retained: "1", churned: "0", Satisfaction: "3.5 / 5 (2)" });
    await page.locator("figure.chart canvas").waitFor();
    // Counts tick in whole numbers; x labels stand at the weekly points; the legend holds values, not "--".
    const chart = page.locator("figure.chart [data-y-ticks]");
    const yTicks = (await chart.getAttribute("data-y-ticks"))!.split("|");
    expect(yTicks.length).toBeGreaterThan(1);
    for (const tick of yTicks) expect(tick).toMatch(/^\d+$/);
    const weekStarts = await page.locator("figure.chart tbody tr td:first-child").allTextContents();
    const xTicks = (await chart.getAttribute("data-x-ticks"))!.split("|");
    expect(xTicks).toHaveLength(weekStarts.length);
    expect(xTicks.at(-1)).toBe(new Date(`${weekStarts.at(-1)}T00:00:00Z`).toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" }));
    const legend = await page.locator("figure.chart .u-legend").textContent();
    expect(legend).not.toContain("--");
    expect(legend).toMatch(/Week of.*tried.*1.*adopted.*1/);
    const thisWeek = page.locator("figure.chart tbody tr").last();
    expect((await thisWeek.locator("td").allTextContents()).slice(1, 3)).toEqual(["1", "1"]);
    const states = page.getByRole("table").filter({ has: page.getByRole("columnheader", { name: "Days used" }) });
    await states.getByRole("link", { name: "c-019" }).waitFor();
    expect(await states.getByRole("row").filter({ has: page.getByRole("link", { name: "c-001", exact: true }) }).getByRole("cell").nth(1).textContent()).toBe("retained");
    await page.getByRole("button", { name: "Next companies" }).click();
    await states.getByRole("link", { name: "c-039" }).waitFor();
    await expectNoSeriousA11yViolations(page, "feature adoption");
    await page.getByRole("heading", { name: "Adoption and satisfaction" }).scrollIntoViewIfNeeded();
    await screenshot(harness, page, "adoption");
    expectCleanConsole(errors);
  });
});
