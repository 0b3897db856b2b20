/**
 * Every page of the dashboard at a laptop's width (1366) and a phone's (390), each loaded fresh at that width as a
 * person would open it: its heading shows, axe-core finds nothing serious, nothing is wider than the screen (the
 * page scrolls down, never sideways), and a full-page screenshot is kept for a person to look at.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { adminRequest, request } from "../support/http.js";
import { createOwner, expectCleanConsole, expectNoSeriousA11yViolations, fillSignIn, HAS_CHROMIUM, OWNER, startHarness, type Harness, keepPagesOfFailedTests } from "./support.js";

const WIDTHS = [
  [1366, 900],
  [390, 844],
] as const;

describe.runIf(HAS_CHROMIUM)("dashboard pages at 1366 and 390 px", () => {
  let harness: Harness;
  let base: string;
  const pages = new Map<number, { page: Page; errors: string[] }>();

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("tour");
    await createOwner(harness);
    const app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    const production = app.environments.find((each: { name: string }) => each.name === "production");
    await adminRequest(harness.server, "PUT", `/admin/apps/${app.id}/features/huddle`, { name: "Huddle calls", description: "Calls in a huddle", stage: "Beta" });
    await adminRequest(harness.server, "PUT", `/admin/apps/${app.id}/features/export`, { description: "CSV export of every report" });
    await adminRequest(harness.server, "PUT", `/admin/environments/${production.id}/features/huddle/targeting`, {
      rules: [{ filter: { type: "group", operator: "or", filters: [{ type: "context", field: "company.plan", operator: "IS", values: ["pro"] }, { type: "rolloutPercentage", key: "huddle", partialRolloutAttribute: "company.id", partialRolloutThreshold: 25000 }] } }],
    });
    const items = [
      { type: "company", companyId: "acme-inc", userId: "ada", attributes: { name: "Acme Inc", plan: "pro" } },
      { type: "user", userId: "ada", attributes: { name: "Ada Lovelace", email: "ada@acme.test" } },
      { type: "event", event: "huddle", userId: "ada", companyId: "acme-inc" },
      { type: "feedback", userId: "ada", companyId: "acme-inc", key: "huddle", score: 4, comment: "Calls start fast; the sound could be louder." },
    ];
    expect((await request(harness.url, "POST", "/bulk", { headers: { authorization: `Bearer ${production.publishableKey}` }, body: items })).status).toBe(200);
    base = `${harness.url}/dashboard/#/apps/${app.id}/environments/${production.id}`;
    for (const [width, height] of WIDTHS) {
      const { page, errors } = await harness.open({ width, height });
      pages.set(width, { page, errors });
      await page.goto(`${base}/features`);
      // The sign-in page, as a signed-out visit to a feature list shows it.
      await page.getByRole("heading", { name: "Sign in to Switchyard" }).waitFor();
      await look(page, width, "sign-in");
      await fillSignIn(page, OWNER.email, OWNER.password);
    }
  });
  afterAll(async () => {
    for (const { page } of pages.values()) await page.context().close();
    await harness?.close();
  });

  async function look(page: Page, width: number, name: string) {
    await page.screenshot({ path: join(harness.shotsDir, `${name}-${width}.png`), fullPage: true });
    await expectNoSeriousA11yViolations(page, `${name} at ${width} px`);
    // What sticks out, named, so a failure says where to look.
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll("body *")]
        .filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !element.parentElement?.closest(".table-scroll, .tail, pre, .visually-hidden"))
        .slice(0, 3)
        .map((element) => `${element.tagName.toLowerCase()}.${element.className}`),
    );
    expect(wide, `${name} at ${width} px is wider than the screen`).toEqual([]);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow, `${name} at ${width} px scrolls sideways`).toBeLessThanOrEqual(0);
  }

  const tour: [string, string, string | RegExp][] = [
    ["features", "/features", "Features"],
    ["feature", "/features/huddle", "Huddle calls"],
    ["keys", "/keys", "Keys and SDK set-up"],
    ["companies", "/companies", "Companies"],
    ["company", "/companies/acme-inc", "Company acme-inc"],
    ["users", "/users", "Users"],
    ["user", "/users/ada", "User ada"],
    ["feedback", "/feedback", "Feedback"],
    ["surveys", "/surveys", "Feedback surveys"],
    ["segments", "/segments", "Segments"],
    ["stages", "/stages", "Release stages"],
    ["live-events", "/events", "Live events"],
    ["webhooks", "/webhooks", "Webhooks"],
    ["feature-not-found", "/features/nope", "Feature not found"],
  ];

  for (const [name, path, heading] of tour) {
    it(`shows ${name} at both widths`, async () => {
      for (const [width] of WIDTHS) {
        const { page } = pages.get(width)!;
        await page.goto(`${base}${path}`);
        await page.reload();
        await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
        // Let the page's reads land (lists, charts) before looking at it.
        await page.waitForLoadState("networkidle");
        await look(page, width, name);
      }
    });
  }

  it("shows the owner's pages (members, audit log) and the CLI's signed-in page at both widths", async () => {
    for (const [width] of WIDTHS) {
      const { page, errors } = pages.get(width)!;
      for (const [name, url, heading] of [
        ["members", `${harness.url}/dashboard/#/members`, "Members and tokens"],
        ["audit", `${harness.url}/dashboard/#/audit`, "Audit log"],
        ["operations", `${harness.url}/dashboard/#/operations`, "Backup and flags as files"],
        ["cli-login-success", `${harness.url}/cli-login/success`, "The CLI is signed in"],
      ] as const) {
        await page.goto(url);
        await page.reload();
        await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
        await page.waitForLoadState("networkidle");
        await look(page, width, name);
      }
      expectCleanConsole(errors);
    }
  });

  it("folds the sections into a menu at 390 px, opened by keyboard", async () => {
    const { page } = pages.get(390)!;
    await page.goto(`${base}/features`);
    await page.getByRole("heading", { name: "Features", level: 1 }).waitFor();
    const sections = page.getByRole("navigation", { name: "Sections" });
    expect(await sections.isVisible()).toBe(false);
    await page.getByRole("button", { name: "Menu" }).focus();
    await page.keyboard.press("Enter");
    await sections.getByRole("link", { name: "Keys & SDKs" }).click();
    await page.getByRole("heading", { name: "Keys and SDK set-up", level: 1 }).waitFor();
    // Following a link closes the menu again.
    expect(await sections.isVisible()).toBe(false);
  });
});

