/**
 * Feature detail in Chromium: build "company plan is pro OR 25 % of users" in the visual editor, save (version 1),
 * see the JSON view of the same tree and edit it back; a server validation message shows at the rule it concerns;
 * "try it" and @bucketco/browser-sdk against the same service agree; change the rollout by keyboard, see the diff
 * in the history and revert; a remote config variant; a viewer cannot save.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { BrowserContext, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMember } from "../support/accounts.js";
import { adminRequest, request } from "../support/http.js";
import { confirmInDialog, createOwner, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, OWNER, screenshot, signInByKeyboard, startHarness, type Harness, keepPagesOfFailedTests } from "./support.js";

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
  let appId: string;
  const targetingUrl = () => `/admin/environments/${production}/features/huddle`;

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("feature-detail");
    await createOwner(harness);
    const app = (await adminRequest(harness.server, "POST", "/admin/apps", { name: "Acme" })).body.app;
    const environment = app.environments.find((each: { name: string }) => each.name === "production");
    production = environment.id;
    publishableKey = environment.publishableKey;
    appId = app.id;
    await adminRequest(harness.server, "PUT", `/admin/apps/${app.id}/features/huddle`, { description: "Huddles", stage: "Beta" });
    // This suite is about the editor: production's confirmation before each save has its own suite (governance.test.ts).
    await adminRequest(harness.server, "PUT", `/admin/environments/${production}/policy`, { confirmChanges: false });
    ({ page, context, errors } = await harness.open());
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
    await page.getByRole("link", { name: "huddle" }).click();
    await page.getByRole("heading", { name: "huddle", level: 1 }).waitFor();
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

  it("shows the same tree as JSON, takes edits there back to the visual view, and shows server validation once, at the rule", async () => {
    await page.getByRole("button", { name: "JSON", exact: true }).click();
    const json = page.getByLabel("Rules as JSON");
    expect(JSON.parse(await json.inputValue())).toEqual(PRO_OR_QUARTER);
    // A second rule, written as JSON, with an operator the service does not know.
    const edited = [...PRO_OR_QUARTER, { filter: { type: "context", field: "company.tier", operator: "BETWEEN", values: ["1"] } }];
    await json.fill(JSON.stringify(edited, null, 2));
    await screenshot(harness, page, "rule-json");
    await page.getByRole("button", { name: "Visual", exact: true }).click();
    await group("Rule 2").waitFor();
    expect(await group("Rule 2").getByLabel("Field", { exact: true }).inputValue()).toBe("company.tier");
    // The editor shows the operator it holds, even one it does not know, never another one in its place.
    expect(await group("Rule 2").getByLabel("Operator", { exact: true }).inputValue()).toBe("BETWEEN");
    await page.getByRole("button", { name: "Save targeting" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("INVALID_RULES");
    // The message sits at rule 2's node, whose inputs are marked invalid and point at it; it shows once on the page.
    const rule2Errors = group("Rule 2").locator(".field-errors");
    expect(await rule2Errors.textContent()).toContain("rules.1.filter.operator");
    expect(await page.getByText(/Unknown operator "BETWEEN"/).count()).toBe(1);
    expect(await group("Rule 2").getByLabel("Field", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    expect(await group("Rule 1").locator(".field-errors").count()).toBe(0);
    await expectNoSeriousA11yViolations(page, "rule editor with a validation error");
    await screenshot(harness, page, "rule-validation-error");
    expect((await adminRequest(harness.server, "GET", targetingUrl())).body.targeting.version).toBe(1);
    // Changing the rules clears the service's message: it was about the rules as they were.
    await group("Rule 2").getByLabel("Operator", { exact: true }).selectOption("IS");
    expect(await page.getByRole("alert").count()).toBe(0);
    expect(await page.getByText(/Unknown operator/).count()).toBe(0);
    await page.getByRole("button", { name: "Remove Rule 2" }).click();
    expect(await group("Rule 2").count()).toBe(0);
  });

  it("cannot save invalid JSON: the parse error shows at the field and Save waits until it parses", async () => {
    await page.getByRole("button", { name: "JSON", exact: true }).click();
    const json = page.getByLabel("Rules as JSON");
    const save = page.getByRole("button", { name: "Save targeting" });
    // Half of an edit: the text no longer parses.
    await json.fill('[{"filter": {"type": "constant", "value": false}');
    const describedBy = await json.getAttribute("aria-describedby");
    expect(await page.locator(`#${describedBy}`).textContent()).toContain("Not valid JSON");
    expect(await json.getAttribute("aria-invalid")).toBe("true");
    expect(await save.isDisabled()).toBe(true);
    // The visual view would show an older tree than the text: it is refused (aria-disabled) until the JSON parses.
    expect(await page.getByRole("button", { name: "Visual", exact: true }).getAttribute("aria-disabled")).toBe("true");
    await page.getByRole("button", { name: "Visual", exact: true }).click({ force: true });
    expect(await json.count()).toBe(1);
    await screenshot(harness, page, "rule-json-invalid");
    // Valid again (the rules as saved): Save is offered; back to the visual view.
    await json.fill(JSON.stringify(PRO_OR_QUARTER));
    expect(await save.isDisabled()).toBe(false);
    await page.getByRole("button", { name: "Visual", exact: true }).click();
    await group("Rule 1").waitFor();
    expect((await adminRequest(harness.server, "GET", targetingUrl())).body.targeting.version).toBe(1);
  });

  it("refuses an empty value where the operator compares one (IS \"\", GT \"\"), at the condition, without saving", async () => {
    await page.getByRole("button", { name: "Add rule" }).click();
    const rule = group("Rule 2");
    await rule.getByLabel("Field", { exact: true }).fill("company.plan");
    await rule.getByLabel("Operator", { exact: true }).selectOption("IS");
    // By keyboard: focus Save and press Enter.
    await page.getByRole("button", { name: "Save targeting" }).focus();
    await page.keyboard.press("Enter");
    await page.getByText("Not saved: one condition needs fixing").waitFor();
    expect(await rule.locator(".field-errors").textContent()).toContain("Enter a value");
    expect(await rule.getByLabel("Value", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    await rule.getByLabel("Operator", { exact: true }).selectOption("GT");
    await page.getByRole("button", { name: "Save targeting" }).click();
    expect(await rule.locator(".field-errors").textContent()).toContain("Enter a value");
    await rule.getByLabel("Number", { exact: true }).fill("");
    expect(await rule.locator(".field-errors").count()).toBe(1);
    await expectNoSeriousA11yViolations(page, "rule editor refusing an empty value");
    await screenshot(harness, page, "rule-empty-value");
    expect((await adminRequest(harness.server, "GET", targetingUrl())).body.targeting.version).toBe(1);
    await page.getByRole("button", { name: "Remove Rule 2" }).click();
    expect(await page.getByText("Not saved").count()).toBe(0);
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

    await page.getByRole("tab", { name: "History" }).click();
    await page.getByRole("button", { name: "Show diff of targeting v2" }).click();
    const diff = page.getByLabel("Changes in targeting version 2");
    expect(await diff.locator(".diff-removed").allTextContents()).toEqual([expect.stringContaining('"partialRolloutThreshold": 25000')]);
    expect(await diff.locator(".diff-added").allTextContents()).toEqual([expect.stringContaining('"partialRolloutThreshold": 30000')]);
    expect(await page.locator(".history li").first().textContent()).toContain(`by ${OWNER.email}`);
    await expectNoSeriousA11yViolations(page, "history with a diff");
    await screenshot(harness, page, "history-diff");

    await page.getByRole("button", { name: "Revert to targeting v1" }).click();
    await confirmInDialog(page, "Revert to v1");
    await page.getByText("Reverted: targeting version 3 equals version 1.").waitFor();
    const reverted = (await adminRequest(harness.server, "GET", targetingUrl())).body.targeting;
    expect(reverted).toEqual({ version: 3, rules: PRO_OR_QUARTER });
    await page.waitForFunction(() => document.querySelector("#targeting-title")?.textContent?.includes("version 3"));
    await page.getByRole("tab", { name: "Targeting and config" }).click();
    expect(await group("Rule 1, condition 2").getByLabel("Percent", { exact: true }).inputValue()).toBe("25");
  });

  it("saves a remote config variant with a JSON payload, served by the evaluator", async () => {
    await page.getByRole("button", { name: "Add variant" }).click();
    await page.getByLabel("Variant key").fill("dark");
    await page.getByLabel("Payload (JSON)").fill('{"theme": "dark"');
    expect(await page.locator(".field-error").textContent()).toBeTruthy();
    expect(await page.getByRole("button", { name: "Save config" }).isDisabled()).toBe(true);
    await page.getByLabel("Payload (JSON)").fill('{"theme": "dark"}');
    // A double click submits once: the button is disabled while its request runs. The request is held until both
    // clicks are in, so a loaded machine cannot answer it between them (the second click would then be a second save).
    let releaseSave!: () => void;
    const saveHeld = new Promise<void>((resolve) => (releaseSave = resolve));
    const configSaves: string[] = [];
    const holdConfigSave = async (route: Route) => {
      if (route.request().method() !== "PUT") return route.continue();
      configSaves.push(route.request().url());
      await saveHeld;
      await route.continue();
    };
    await page.route(/\/features\/[^/]+\/config$/, holdConfigSave);
    await page.getByRole("button", { name: "Save config" }).dblclick();
    expect(await page.getByRole("button", { name: "Saving…" }).isDisabled()).toBe(true);
    releaseSave();
    await page.getByText("Saved as config version 1.").waitFor();
    await page.unroute(/\/features\/[^/]+\/config$/, holdConfigSave);
    expect(configSaves).toHaveLength(1);
    expect((await adminRequest(harness.server, "GET", `${targetingUrl()}/history`)).body.versions.filter((version: { kind: string }) => version.kind === "config")).toHaveLength(1);
    const config = (await adminRequest(harness.server, "GET", targetingUrl())).body.config;
    expect(config).toEqual({ version: 1, variants: [{ key: "dark", payload: { theme: "dark" }, filter: { type: "constant", value: true } }] });
    await page.getByLabel("User id").fill("u-9");
    await page.getByRole("button", { name: "Evaluate" }).click();
    await page.waitForFunction(() => document.querySelector(".try-result")?.getAttribute("data-for") === "u-9");
    expect(await page.locator(".try-result").textContent()).toContain('dark {"theme":"dark"}');
    expectCleanConsole(errors);
  });

  it("fills the context from a tracked company's stored attributes in 'try it', as for an SDK", async () => {
    const tracked = await request(harness.url, "POST", "/company", { headers: { authorization: `Bearer ${publishableKey}` }, body: { companyId: "c-tracked", attributes: { plan: "pro" } } });
    expect(tracked.status).toBe(200);
    await page.getByLabel("User id").fill("u-remote");
    await page.getByLabel("Company id").fill("c-tracked");
    await page.getByLabel(/Other attributes/).fill("");
    await page.getByRole("button", { name: "Evaluate" }).click();
    await page.waitForFunction(() => document.querySelector(".try-result")?.getAttribute("data-for") === "u-remote");
    const result = await page.locator(".try-result").textContent();
    expect(result).toMatch(/Resultenabled/);
    expect(result).toMatch(/Matched ruleRule 1/);
    expect(result).toMatch(/Stored attributes usedyes/);
    // A line that is not path=value is refused at its line, not left out of the context without a word.
    await page.getByLabel(/Other attributes/).fill("company.plan=pro\nplan pro");
    await page.getByRole("button", { name: "Evaluate" }).click();
    await page.getByText('Line 2 ("plan pro") is not path=value').waitFor();
    expect(await page.getByLabel(/Other attributes/).getAttribute("aria-invalid")).toBe("true");
    expect(await page.locator(".try-result").getAttribute("data-for")).toBe("u-remote");
    await page.getByLabel(/Other attributes/).fill("");
    expect(await page.getByLabel(/Other attributes/).getAttribute("aria-invalid")).toBeNull();
  });

  it("saves the feature's settings, opt-in included, and titles the page with the name, the key beside it", async () => {
    await page.getByLabel("Name", { exact: true }).fill("Huddle calls");
    await page.getByLabel("Users and companies may opt in").check();
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").waitFor();
    const feature = (await adminRequest(harness.server, "GET", targetingUrl())).body.feature;
    expect(feature).toMatchObject({ name: "Huddle calls", stage: "Beta", optInEnabled: true, description: "Huddles" });
    await page.getByRole("heading", { name: "Huddle calls", level: 1 }).waitFor();
    expect(await page.getByTestId("feature-key").textContent()).toBe("huddle");
  });

  it("offers every operator of API.md §3 with the input its values need, and NOT around a condition", async () => {
    const inputs: Record<string, string> = {
      IS: "text", IS_NOT: "text", ANY_OF: "list", NOT_ANY_OF: "list", CONTAINS: "text", NOT_CONTAINS: "text", GT: "number", LT: "number",
      AFTER: "days", BEFORE: "days", DATE_AFTER: "date", DATE_BEFORE: "date", SET: "none", NOT_SET: "none", IS_TRUE: "none", IS_FALSE: "none",
    };
    await page.getByRole("button", { name: "Add rule" }).click();
    const rule = group("Rule 2");
    const seen: Record<string, string> = {};
    for (const operator of Object.keys(inputs)) {
      await rule.getByLabel("Operator", { exact: true }).selectOption(operator);
      seen[operator] = await rule.evaluate((node) => {
        const row = node.querySelector(".row")!;
        if (row.querySelector("textarea")) return "list";
        if (row.querySelector('input[type="date"]')) return "date";
        const number = row.querySelector('input[type="number"]');
        if (number) return number.getAttribute("step") === "1" ? "days" : "number";
        return row.querySelectorAll('input[type="text"]').length > 1 ? "text" : "none";
      });
    }
    expect(seen).toEqual(inputs);
    await rule.getByLabel("Operator", { exact: true }).selectOption("ANY_OF");
    await rule.getByLabel("Field", { exact: true }).fill("company.id");
    await rule.getByLabel(/Values/).fill("acme\ninitech");
    await page.getByLabel("Rule 2: kind").selectOption("negation");
    await page.getByRole("button", { name: "Save targeting" }).click();
    await page.getByText("Saved as version 4.").waitFor();
    const rules = (await adminRequest(harness.server, "GET", targetingUrl())).body.targeting.rules;
    expect(rules[1]).toEqual({ filter: { type: "negation", filter: { type: "context", field: "company.id", operator: "ANY_OF", values: ["acme", "initech"] } } });
  });

  it("targets a segment, keeping the reference as saved while the service serves it inlined", async () => {
    const created = await adminRequest(harness.server, "POST", `/admin/apps/${appId}/segments`, {
      name: "Enterprise companies",
      filter: { type: "context", field: "company.plan", operator: "IS", values: ["enterprise"] },
    });
    expect(created.status).toBe(200);
    const segmentId = created.body.segment.id;
    await page.reload();
    await page.getByRole("heading", { name: "Huddle calls", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Add rule" }).click();
    await page.getByLabel("Rule 3: kind").selectOption("segment");
    await group("Rule 3").getByLabel("Segment", { exact: true }).selectOption({ label: "Enterprise companies" });
    await page.getByRole("button", { name: "Save targeting" }).click();
    await page.getByText("Saved as version 5.").waitFor();
    const targeting = (await adminRequest(harness.server, "GET", targetingUrl())).body.targeting;
    expect(targeting.segmentRules[2]).toEqual({ filter: { type: "segment", segmentId } });
    expect(targeting.rules[2]).toEqual({ filter: { type: "context", field: "company.plan", operator: "IS", values: ["enterprise"] } });
    // The editor shows the rules as saved: the segment, not its inlined filter.
    expect(await group("Rule 3").getByLabel("Segment", { exact: true }).inputValue()).toBe(segmentId);
    expect(await page.locator(".rule-summary").nth(2).textContent()).toContain("companies in segment Enterprise companies");
    // The variant editor does not offer segments (config cannot name them).
    expect(await page.getByLabel("Variant 1 filter: kind").locator("option", { hasText: "Company in segment" }).count()).toBe(0);
  });

  it("lets a viewer read the rules but not save them", async () => {
    await createMember(harness.url, harness.server.adminToken, "vera@example.com", "viewer");
    const { page: viewer, context: viewerContext } = await harness.open();
    await signInByKeyboard(viewer, harness.url, "vera@example.com", OWNER.password);
    await viewer.getByRole("link", { name: "Huddle calls" }).click();
    await viewer.getByText("a viewer cannot change it").waitFor();
    expect(await viewer.getByRole("button", { name: "Save targeting" }).count()).toBe(0);
    expect(await viewer.getByRole("button", { name: "Add rule" }).count()).toBe(0);
    // Promotion, prerequisites and rollout starts are writes too: a viewer sees the cards without their buttons.
    await viewer.getByRole("region", { name: "Other environments" }).getByRole("rowheader", { name: "development" }).waitFor();
    expect(await viewer.getByRole("button", { name: /^Promote/ }).count()).toBe(0);
    await viewer.getByRole("region", { name: "Prerequisites" }).getByText("depends on no other feature here").waitFor();
    expect(await viewer.getByRole("button", { name: "Add prerequisite" }).count()).toBe(0);
    expect(await viewer.getByRole("link", { name: "Start a guarded rollout" }).count()).toBe(0);
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

  it("shows the other environments side by side and promotes production's rules to development", async () => {
    const app = (await adminRequest(harness.server, "GET", "/admin/apps")).body.apps[0];
    const development = app.environments.find((each: { name: string }) => each.name === "development").id;
    await page.getByLabel("Environment", { exact: true }).selectOption({ label: "development" });
    const others = page.getByRole("table").filter({ has: page.getByRole("rowheader", { name: "production" }) });
    await others.waitFor();
    const production = others.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "production" }) });
    // The table appears before its rows are filled in: wait for the cells, not only the table.
    await expect.poll(async () => (await production.getByRole("cell").allTextContents()).slice(0, 2)).toEqual(["some", "5"]);
    await expectNoSeriousA11yViolations(page, "feature detail in development");
    // Promotion goes from the environment shown to another: back to production, and promote to development.
    await page.getByLabel("Environment", { exact: true }).selectOption({ label: "production" });
    await page.getByRole("region", { name: "Other environments" }).getByRole("button", { name: "Promote to development" }).click();
    const dialog = page.getByRole("dialog", { name: "Promote huddle to development?" });
    await dialog.getByRole("button", { name: "Promote to development" }).click();
    await dialog.waitFor({ state: "detached" });
    await page.getByText("Promoted to development: wrote its targeting (now version 1)").waitFor();
    const copied = (await adminRequest(harness.server, "GET", `/admin/environments/${development}/features/huddle`)).body.targeting;
    const source = (await adminRequest(harness.server, "GET", targetingUrl())).body.targeting;
    expect(copied).toEqual({ ...source, version: 1 });
    await page.getByLabel("Environment", { exact: true }).selectOption({ label: "development" });
    await group("Rule 3").waitFor();
  });
});
