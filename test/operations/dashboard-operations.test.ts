/**
 * The dashboard's backup and flags-as-files page (issue 32) in Chromium: an owner downloads a backup (a whole file,
 * trailer and all), exports an app's flags, reviews an edited document as a dry run — the diff shows, nothing changes
 * — and applies it; a bad document shows each problem's path; a viewer sees no backup and no import.
 */
import { readFileSync } from "node:fs";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMember } from "../support/accounts.js";
import { adminRequest, request } from "../support/http.js";
import { createOwner, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, navLink, OWNER, PASSWORD, signInByKeyboard, startHarness, type Harness } from "../dashboard/support.js";

describe.runIf(HAS_CHROMIUM)("dashboard: backup and flags as files", () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let app: { id: string; environments: { id: string; name: string; secretKey: string }[] };
  const production = () => app.environments.find((each) => each.name === "production")!;
  const servedRules = async () => (await request(harness.url, "GET", "/features", { token: production().secretKey })).body.features[0].targeting.rules;

  beforeAll(async () => {
    harness = await startHarness("operations");
    await createOwner(harness);
    app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    await adminRequest(harness.server, "PUT", `/admin/apps/${app.id}/features/huddle`, { description: "Huddles" });
    await adminRequest(harness.server, "PUT", `/admin/environments/${production().id}/features/huddle/targeting`, { rules: [{ filter: { type: "constant", value: true } }] });
    ({ page, context, errors } = await harness.open());
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
  });
  afterAll(async () => {
    await context?.close();
    await harness?.close();
  });

  it("lets an owner download a whole backup", async () => {
    await navLink(page, "Backup and flags files").click();
    await page.getByRole("heading", { name: "Backup and flags as files", level: 1 }).waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download a backup" }).click()]);
    expect(download.suggestedFilename()).toMatch(/^switchyard-\d{8}T\d{6}Z\.backup$/);
    const bytes = readFileSync((await download.path())!);
    expect(bytes.subarray(0, 20).toString("latin1")).toBe("SWITCHYARD-BACKUP/1\n");
    expect(bytes.subarray(bytes.length - 48, bytes.length - 40).toString("latin1")).toBe("SYBK-END");
    await expectNoSeriousA11yViolations(page, "backup and flags page");
  });

  it("exports, shows the dry run's diff without changing anything, then applies it", async () => {
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export Acme as a file" }).click()]);
    const document = JSON.parse(readFileSync((await download.path())!, "utf8"));
    expect(document.format).toBe("switchyard.flags/v1");
    document.features[0].environments.production.rules = [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }];
    await page.getByLabel("or paste it here").fill(JSON.stringify(document));
    await page.getByRole("button", { name: "Review the changes (dry run)" }).click();
    const review = page.getByRole("region", { name: "What the import would change" });
    await review.waitFor();
    await expect.poll(() => review.getByRole("row").nth(1).innerText()).toMatch(/huddle\s+production\s+changed\s+rules/);
    await expect.poll(() => review.innerText()).toContain("0 created, 1 changed, 1 unchanged");
    expect(await servedRules()).toEqual([{ filter: { type: "constant", value: true } }]);
    await review.getByRole("button", { name: "Apply these changes" }).click();
    await page.getByRole("status").filter({ hasText: "Imported: 0 created, 1 changed" }).waitFor();
    expect(await servedRules()).toEqual(document.features[0].environments.production.rules);
    expectCleanConsole(errors);
  });

  it("shows each problem of a bad document at its path", async () => {
    await page.getByLabel("or paste it here").fill(JSON.stringify({ format: "switchyard.flags/v1", features: [{ key: "x", enviroments: {} }] }));
    await page.getByRole("button", { name: "Review the changes (dry run)" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    await expect.poll(() => alert.innerText()).toContain("features.0.enviroments");
    expect(await page.getByRole("region", { name: "What the import would change" }).count()).toBe(0);
  });

  it("shows a viewer the export only", async () => {
    await createMember(harness.url, harness.server.adminToken, "viewer@example.com", "viewer");
    const viewer = await harness.open();
    try {
      await signInByKeyboard(viewer.page, harness.url, "viewer@example.com", PASSWORD);
      await viewer.page.goto(`${harness.url}/dashboard/#/operations`);
      await viewer.page.getByRole("heading", { name: "Backup and flags as files", level: 1 }).waitFor();
      await viewer.page.getByRole("button", { name: "Export Acme as a file" }).waitFor();
      expect(await viewer.page.getByRole("link", { name: "Download a backup" }).count()).toBe(0);
      expect(await viewer.page.getByRole("button", { name: "Review the changes (dry run)" }).count()).toBe(0);
    } finally {
      await viewer.context.close();
    }
  });
});
