/**
 * Feature detail in Chromium: build "company plan is pro OR 25 % of users" in the visual editor, save (version 1),
 * see the JSON view of the same tree and edit it back; a server validation message shows at the rule it concerns;
 * "try it" and @bucketco/browser-sdk against the same service agree; change the rollout by keyboard, see the diff
 * in the history and revert; a remote config variant; a viewer cannot save.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMember } from "../support/accounts.js";
import { adminRequest } from "../support/http.js";
import { createOwner, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, OWNER, screenshot, signInByKeyboard, startHarness, type Harness } from "./support.js";

const require = createRequire(import.meta.url);
const BUCKET_BROWSER_SDK = readFileSync(require.resolve("@bucketco/browser-sdk"), "utf8");

const PRO_OR_QUARTER = [
  {
    filter: {
      type: "group",
      operator: "or",
      filters: [
        { type: "context", field: "company.plan", operator: "IS", values: ["pro"] },
        { type: "rolloutPercentage", key: "huddle", partialRolloutAttribute: "user.id", partialRolloutThreshold: 25000 },
      ],
    },
  },
];

/** Contexts the try-it panel and the SDK both evaluate. */
const CONTEXTS = [
  { user: "u-1", company: "c-pro", plan: "pro" },
  ...Array.from({ length: 5 }, (_, index) => ({ user: `user-${index}`, company: "c-free", plan: "free" })),
];

describe.runIf(HAS_CHROMIUM)("dashboard feature detail", () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let production: string;
  let publishableKey: string;
  const targetingUrl = () => `/admin/environments/${production}/features/huddle`;

  beforeAll(async () => {
    harness = await startHarness("feature-detail");
    await createOwner(harness);
    const app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    const environment = app.environments.find((each: { name: string }) => each.name === "production");
    production = environment.id;
    publishableKey = environment.publishableKey;
    await adminRequest(harness.server, "PUT", `/admin/apps/${app.id}/features/huddle`, { description: "Huddles", stage: "beta" });
    ({ page, context, errors } = await harness.open());
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
    await page.getByRole("link", { name: "huddle" }).click();
    await page.getByRole("heading", { name: "Feature huddle" }).waitFor();
  });
  afterAll(async () => {
    await context?.close();
    await harness?.close();
  });

  const group = (name: string) => page.getByRole("group", { name, exact: true });

  it("builds 'company plan is pro OR 25 % of users' in the visual editor and saves it as version 1", async () => {
    await page.getByRole("button", { name: "Add rule" }).click();
    await page.getByLabel("Rule 1: kind").selectOption("group");
    await page.getByRole("radiogroup", { name: "Rule 1: combine with" }).getByRole("radio", { name: "ANY (OR)" }).check();
    // Turning the rule into a group keeps its condition as the group's first member.
    const first = group("Rule 1, condition 1");
    await first.getByLabel("Field", { exact: true }).fill("company.plan");
    await first.getByLabel("Operator", { exact: true }).selectOption("IS");
    await first.getByLabel("Value", { exact: true }).fill("pro");
    await page.getByRole("button", { name: "Add condition to Rule 1" }).click();
    await page.getByLabel("Rule 1, condition 2: kind").selectOption("rolloutPercentage");
    const second = group("Rule 1, condition 2");
    await second.getByLabel("Percent", { exact: true }).fill("25");
    await second.getByLabel("By attribute").fill("user.id");
    expect(await page.locator(".rule-summary").first().textContent()).toContain("(company.plan is pro OR 25% by user.id)");
    await expectNoSeriousA11yViolations(page, "feature detail with a rule being edited");
    await page.getByRole("button", { name: "Save targeting" }).click();
    await page.getByText("Saved as version 1.").waitFor();
    const saved = (await adminRequest(harness.server, "GET", targetingUrl())).body;
    expect(saved.targeting).toEqual({ version: 1, rules: PRO_OR_QUARTER });
    await screenshot(harness, page, "rule-editor");
  });

  it("shows the same tree as JSON, takes edits there back to the visual view, and shows server validation at the rule", async () => {
    await page.getByRole("button", { name: "JSON", exact: true }).click();
    const json = page.getByLabel("Rules as JSON");
    expect(JSON.parse(await json.inputValue())).toEqual(PRO_OR_QUARTER);
    // A second rule, written as JSON, missing the values its operator needs.
    const edited = [...PRO_OR_QUARTER, { filter: { type: "context", field: "company.tier", operator: "GT" } }];
    await json.fill(JSON.stringify(edited, null, 2));
    await screenshot(harness, page, "rule-json");
    await page.getByRole("button", { name: "Visual", exact: true }).click();
    await group("Rule 2").waitFor();
    expect(await group("Rule 2").getByLabel("Field", { exact: true }).inputValue()).toBe("company.tier");
    expect(await group("Rule 2").getByLabel("Operator", { exact: true }).inputValue()).toBe("GT");
    await page.getByRole("button", { name: "Save targeting" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("INVALID_RULES");
    // The message sits at rule 2's node, whose inputs are marked invalid and point at it.
    const rule2Errors = group("Rule 2").locator(".field-errors");
    expect(await rule2Errors.textContent()).toContain("rules.1.filter");
    expect(await group("Rule 2").getByLabel("Field", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    expect(await group("Rule 1").locator(".field-errors").count()).toBe(0);
    await expectNoSeriousA11yViolations(page, "rule editor with a validation error");
    await screenshot(harness, page, "rule-validation-error");
    expect((await adminRequest(harness.server, "GET", targetingUrl())).body.targeting.version).toBe(1);
    await page.getByRole("button", { name: "Remove Rule 2" }).click();
    expect(await group("Rule 2").count()).toBe(0);
  });

  it("computes 'try it' with the service's evaluator, in agreement with @bucketco/browser-sdk", async () => {
    const tried: boolean[] = [];
    for (const each of CONTEXTS) {
      await page.getByLabel("User id").fill(each.user);
      await page.getByLabel("Company id").fill(each.company);
      await page.getByLabel(/Other attributes/).fill(`company.plan=${each.plan}`);
      await page.getByRole("button", { name: "Evaluate" }).click();
      await page.waitForFunction((user) => document.querySelector(".try-result")?.getAttribute("data-for") === user, each.user);
      tried.push((await page.getByTestId("try-enabled").textContent()) === "enabled");
    }
    expect(tried[0]).toBe(true);
    expect(await page.locator(".try-result").textContent()).toMatch(/Missing context fields\s*none/);
    await screenshot(harness, page, "try-it");

    const sdkPage = await context.newPage();
    // A page of the service's own (its health answer, which carries no CSP) runs the SDK's UMD build; its requests
    // are the SDK's own, to /features/evaluated with the publishable key. (test/browser covers the cross-origin case.)
    await sdkPage.goto(`${harness.url}/health`);
    await sdkPage.evaluate(BUCKET_BROWSER_SDK);
    const fromSdk = await sdkPage.evaluate(
      async ({ contexts, publishableKey, apiBaseUrl }) => {
        const results: boolean[] = [];
        for (const each of contexts) {
          const sdk = (globalThis as any).BucketBrowserSDK;
          const client = new sdk.BucketClient({ publishableKey, apiBaseUrl, user: { id: each.user }, company: { id: each.company, plan: each.plan }, toolbar: false, feedback: { enableAutoFeedback: false } });
          await client.initialize();
          results.push(client.getFeature("huddle").isEnabled);
          await client.stop?.();
        }
        return results;
      },
      { contexts: CONTEXTS, publishableKey, apiBaseUrl: harness.url },
    );
    await sdkPage.close();
    expect(fromSdk).toEqual(tried);
    // Both outcomes occur among the contexts, so the agreement is not trivially all-on or all-off.
    expect(new Set(tried).size).toBe(2);
  });

  it("changes the rollout by keyboard, shows the diff in the history and reverts to version 1", async () => {
    const slider = group("Rule 1, condition 2").getByLabel("Rollout", { exact: true });
    await slider.focus();
    for (let press = 0; press < 5; press++) await page.keyboard.press("ArrowRight");
    expect(await group("Rule 1, condition 2").getByLabel("Percent", { exact: true }).inputValue()).toBe("30");
    await page.getByRole("button", { name: "Save targeting" }).click();
    await page.getByText("Saved as version 2.").waitFor();

    await page.getByRole("button", { name: "Show diff of targeting v2" }).click();
    const diff = page.getByLabel("Changes in targeting version 2");
    expect(await diff.locator(".diff-removed").allTextContents()).toEqual([expect.stringContaining('"partialRolloutThreshold": 25000')]);
    expect(await diff.locator(".diff-added").allTextContents()).toEqual([expect.stringContaining('"partialRolloutThreshold": 30000')]);
    expect(await page.locator(".history li").first().textContent()).toContain(`by ${OWNER.email}`);
    await expectNoSeriousA11yViolations(page, "history with a diff");
    await screenshot(harness, page, "history-diff");

    await page.getByRole("button", { name: "Revert to targeting v1" }).click();
    await page.getByText("Reverted: targeting version 3 equals version 1.").waitFor();
    const reverted = (await adminRequest(harness.server, "GET", targetingUrl())).body.targeting;
    expect(reverted).toEqual({ version: 3, rules: PRO_OR_QUARTER });
    await page.waitForFunction(() => document.querySelector("#targeting-title")?.textContent?.includes("version 3"));
    expect(await group("Rule 1, condition 2").getByLabel("Percent", { exact: true }).inputValue()).toBe("25");
  });

  it("saves a remote config variant with a JSON payload, served by the evaluator", async () => {
    await page.getByRole("button", { name: "Add variant" }).click();
    await page.getByLabel("Variant key").fill("dark");
    await page.getByLabel("Payload (JSON)").fill('{"theme": "dark"');
    expect(await page.locator(".field-error").textContent()).toBeTruthy();
    expect(await page.getByRole("button", { name: "Save config" }).isDisabled()).toBe(true);
    await page.getByLabel("Payload (JSON)").fill('{"theme": "dark"}');
    await page.getByRole("button", { name: "Save config" }).click();
    await page.getByText("Saved as config version 1.").waitFor();
    const config = (await adminRequest(harness.server, "GET", targetingUrl())).body.config;
    expect(config).toEqual({ version: 1, variants: [{ key: "dark", payload: { theme: "dark" }, filter: { type: "constant", value: true } }] });
    await page.getByLabel("User id").fill("u-9");
    await page.getByRole("button", { name: "Evaluate" }).click();
    await page.waitForFunction(() => document.querySelector(".try-result")?.getAttribute("data-for") === "u-9");
    expect(await page.locator(".try-result").textContent()).toContain('dark {"theme":"dark"}');
    expectCleanConsole(errors);
  });

  it("lets a viewer read the rules but not save them", async () => {
    await createMember(harness.url, harness.server.adminToken, "vera@example.com", "viewer");
    const { page: viewer, context: viewerContext } = await harness.open();
    await signInByKeyboard(viewer, harness.url, "vera@example.com", OWNER.password);
    await viewer.getByRole("link", { name: "huddle" }).click();
    await viewer.getByText("a viewer cannot change it").waitFor();
    expect(await viewer.getByRole("button", { name: "Save targeting" }).count()).toBe(0);
    expect(await viewer.getByRole("button", { name: "Add rule" }).count()).toBe(0);
    expect(await viewer.getByRole("group", { name: "Rule 1, condition 1", exact: true }).getByLabel("Field", { exact: true }).isDisabled()).toBe(true);
    // Even a hand-made request from the viewer's session is refused by the service.
    const refused = await viewer.evaluate(async (path) => {
      const session = await (await fetch("/admin/session")).json();
      const answer = await fetch(`${path}/targeting`, { method: "PUT", headers: { "content-type": "application/json", "x-csrf-token": session.csrfToken }, body: JSON.stringify({ rules: [] }) });
      return { status: answer.status, body: await answer.json() };
    }, targetingUrl());
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("FORBIDDEN");
    await expectNoSeriousA11yViolations(viewer, "feature detail as a viewer");
    await screenshot(harness, viewer, "viewer-feature");
    await viewerContext.close();
  });
});
