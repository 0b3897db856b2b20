/**
 * What a team used to need the CLI for, done in Chromium as a person does it (keyboard included): a segment made,
 * used by a feature, edited and refused deletion while used; release stages reordered and their rules re-applied;
 * a feedback survey set up, its prompts and answers counted; an import reviewed before it is applied, its summary
 * counted from the same rows its table lists; a feedback without companyId shown with the company it counts for;
 * the header that stays put when the new-environment form opens. Each page axe-clean at 1366 and 390 px.
 */
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRequest, request } from "../support/http.js";
import {
  confirmInDialog,
  createOwner,
  expectCleanConsole,
  expectNoSeriousA11yViolations,
  HAS_CHROMIUM,
  keepPagesOfFailedTests,
  navLink,
  OWNER,
  screenshotWidths,
  signInByKeyboard,
  startHarness,
  type Harness,
} from "./support.js";

interface AppAnswer {
  id: string;
  environments: { id: string; name: string; publishableKey: string }[];
}

describe.runIf(HAS_CHROMIUM)("dashboard: segments, stages, surveys, import review", () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let app: AppAnswer;
  let production: AppAnswer["environments"][number];
  let huddleId: string;

  keepPagesOfFailedTests(() => harness);

  const admin = (method: string, path: string, body?: unknown) => adminRequest(harness.server, method, path, body);
  const track = async (path: string, body: unknown) => {
    const reply = await request(harness.url, "POST", path, { headers: { authorization: `Bearer ${production.publishableKey}` }, body });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  };
  const scoped = (page: string) => `${harness.url}/dashboard/#/apps/${app.id}/environments/${production.id}/${page}`;

  beforeAll(async () => {
    harness = await startHarness("manage");
    await createOwner(harness);
    app = (await admin("POST", "/admin/apps", { name: "Acme" })).body.app;
    production = app.environments.find((each) => each.name === "production")!;
    huddleId = (await admin("PUT", `/admin/apps/${app.id}/features/huddle`, { name: "Huddle calls" })).body.feature.id;
    await admin("PUT", `/admin/apps/${app.id}/features/export`, {});
    // Tracked companies for the segment's member list; ada belongs to acme (the feedback below names no company).
    await track("/company", { companyId: "acme", userId: "ada", attributes: { plan: "pro" } });
    await track("/company", { companyId: "globex", attributes: { plan: "free" } });
    ({ page, context, errors } = await harness.open());
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
    await page.waitForURL(/#\/apps\//);
  });
  afterAll(async () => {
    await context?.close();
    await harness?.close();
  });

  it("makes a segment in the browser by keyboard, lists its companies, and says who uses it", async () => {
    await navLink(page, "Segments").click();
    await page.getByRole("heading", { name: "Segments", level: 1 }).waitFor();
    await page.getByText("No segments yet.").waitFor();
    const form = page.getByRole("form", { name: "Create segment" });
    await form.getByLabel("Name", { exact: true }).focus();
    await page.keyboard.type("Paying");
    await page.keyboard.press("Tab");
    await page.keyboard.type("Companies on the pro plan");
    await form.getByLabel("Value", { exact: true }).fill("pro");
    await form.getByRole("button", { name: "Create segment" }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Paying", level: 1 }).waitFor();
    const members = page.getByRole("region", { name: "Companies in production" });
    await members.getByRole("link", { name: "acme" }).waitFor();
    expect(await members.getByRole("link").allTextContents()).toEqual(["acme"]);
    const [segment] = (await admin("GET", `/admin/apps/${app.id}/segments`)).body.segments;
    expect(segment).toMatchObject({ name: "Paying", description: "Companies on the pro plan", filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } });

    // Used by a feature: the page links to it and will not delete the segment.
    expect((await admin("PUT", `/admin/environments/${production.id}/features/huddle/targeting`, { rules: [{ filter: { type: "segment", segmentId: segment.id } }] })).status).toBe(200);
    await page.reload();
    const usedBy = page.getByRole("region", { name: "Used by" });
    await usedBy.getByRole("link", { name: "huddle" }).waitFor();
    expect(await usedBy.getByRole("button", { name: "Delete segment" }).isDisabled()).toBe(true);
    await expectNoSeriousA11yViolations(page, "segment page");
    await screenshotWidths(harness, page, "segment");

    // An edit retargets the feature using it.
    await page.getByRole("form", { name: "Save segment" }).getByLabel("Value", { exact: true }).fill("enterprise");
    await page.getByRole("button", { name: "Save segment" }).click();
    await page.getByText("Saved: 1 feature targeting has a new version.").waitFor();
    const served = (await admin("GET", `/admin/environments/${production.id}/features/huddle`)).body.targeting;
    expect(served).toMatchObject({ version: 2, rules: [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["enterprise"] } }] });

    // The feature's rule links back to the segment.
    await usedBy.getByRole("link", { name: "huddle" }).click();
    await page.getByRole("link", { name: "Open segment Paying" }).click();
    await page.getByRole("heading", { name: "Paying", level: 1 }).waitFor();
    expectCleanConsole(errors);
  });

  it("deletes a segment no one uses, after asking", async () => {
    const spare = (await admin("POST", `/admin/apps/${app.id}/segments`, { name: "Spare", filter: { type: "constant", value: true } })).body.segment;
    await page.goto(scoped(`segments/${spare.id}`));
    await page.getByRole("heading", { name: "Spare", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Delete segment" }).click();
    await confirmInDialog(page, "Delete segment");
    await page.getByRole("heading", { name: "Segments", level: 1 }).waitFor();
    expect((await admin("GET", `/admin/apps/${app.id}/segments/${spare.id}`)).status).toBe(404);
    await expect.poll(() => page.getByRole("link", { name: "Spare" }).count()).toBe(0);
    await page.getByRole("link", { name: "Paying" }).waitFor();
  });

  it("reorders release stages by keyboard and re-applies a stage's edited rules to its features", async () => {
    expect((await admin("PUT", `/admin/apps/${app.id}/features/export/stage`, { stage: "Beta" })).status).toBe(200);
    const exportBefore = (await admin("GET", `/admin/environments/${production.id}/features/export`)).body.targeting.version;
    await navLink(page, "Release stages").click();
    await page.getByRole("heading", { name: "Release stages", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Move up Beta" }).focus();
    await page.keyboard.press("Enter");
    await page.getByText("Beta is now stage 2 of 4.").waitFor();
    const order = (await admin("GET", `/admin/apps/${app.id}/stages`)).body.stages.map((stage: { name: string }) => stage.name);
    expect(order).toEqual(["In development", "Beta", "Internal", "General availability"]);
    // Focus stays on the moved stage, so the keyboard can keep moving it.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain("Beta");
    await expectNoSeriousA11yViolations(page, "release stages");
    await screenshotWidths(harness, page, "stages");

    await page.getByRole("button", { name: "Edit rules of Beta" }).click();
    const beta = page.locator("section.stage").filter({ has: page.locator("#stage-st_beta") });
    await beta.getByLabel("Environment").selectOption({ label: "production" });
    await beta.getByRole("button", { name: "Add rule" }).click();
    await beta.getByLabel("Rule 1: kind").selectOption("constant");
    expect(await beta.getByLabel("Also give these rules to the 1 feature in Beta").isChecked()).toBe(true);
    await beta.getByRole("button", { name: "Save stage rules" }).click();
    await page.getByText("Rules of Beta saved and applied to 1 feature.").waitFor();
    const exportAfter = (await admin("GET", `/admin/environments/${production.id}/features/export`)).body.targeting;
    expect(exportAfter.version).toBe(exportBefore + 1);
    expect(exportAfter.rules).toEqual([{ filter: { type: "constant", value: true } }]);

    const create = page.getByRole("form", { name: "New stage" });
    await create.getByLabel("Stage name").fill("Sunset");
    await create.getByRole("button", { name: "Add stage at the end" }).click();
    await page.getByText("Stage Sunset created.").waitFor();
    await page.getByRole("button", { name: "Delete Sunset" }).click();
    await confirmInDialog(page, "Delete stage");
    await page.getByText("Stage Sunset deleted.").waitFor();
    expect(await page.getByRole("button", { name: "Delete Beta" }).isDisabled()).toBe(true);
    expectCleanConsole(errors);
  });

  it("sets up a feedback survey and counts its prompts shown and answered, with the answers", async () => {
    await navLink(page, "Surveys").click();
    await page.getByRole("heading", { name: "Feedback surveys", level: 1 }).waitFor();
    const form = page.getByRole("form", { name: "Set up a survey" });
    await form.getByLabel("Feature").selectOption("huddle");
    await form.getByLabel("Question").fill("How were your huddle calls?");
    await form.getByLabel("Ask after this many uses").fill("2");
    await form.getByRole("button", { name: "Save survey" }).click();
    await page.getByText("The survey of huddle is saved.").waitFor();
    expect((await admin("GET", `/admin/environments/${production.id}/features/huddle/survey`)).body.survey).toMatchObject({ question: "How were your huddle calls?", afterUses: 2, afterDays: null, enabled: true });

    // A prompt shown to two users, one of whom answered it (without companyId: it counts for ada's company).
    const promptedQuestion = "How were your huddle calls?";
    for (const [userId, promptId] of [["ada", "prompt-ada-0001"], ["bob", "prompt-bob-0001"]]) {
      await track("/feedback/prompt-events", { action: "shown", featureId: huddleId, promptId, userId, promptedQuestion });
    }
    await track("/feedback", { userId: "ada", key: "huddle", score: 4, comment: "Clear sound", promptId: "prompt-ada-0001", promptedQuestion, source: "prompt" });
    await page.reload();
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "huddle", exact: true }) });
    await expect.poll(async () => (await row.getByRole("cell").allTextContents()).slice(3, 6)).toEqual(["2", "0", "1"]);
    await page.getByRole("button", { name: "Answers to huddle" }).click();
    const answers = page.getByRole("region", { name: "Answers to the survey of huddle" });
    await answers.getByText("Clear sound").waitFor();
    await expectNoSeriousA11yViolations(page, "surveys");
    await screenshotWidths(harness, page, "surveys");

    // The feature page says it asks, and links here.
    await page.goto(scoped("features/huddle"));
    await page.getByText("asks “How were your huddle calls?”").waitFor();
    await page.getByRole("link", { name: "edit it on the Surveys page" }).click();
    await page.getByRole("heading", { name: "Feedback surveys", level: 1 }).waitFor();
    await page.getByRole("button", { name: "Remove survey of huddle" }).click();
    await confirmInDialog(page, "Remove survey");
    await page.getByText("The survey of huddle is removed.").waitFor();
    expect((await admin("GET", `/admin/environments/${production.id}/features/huddle/survey`)).status).toBe(404);
    expectCleanConsole(errors);
  });

  it("shows a feedback sent without companyId with the company it counts for", async () => {
    await navLink(page, "Feedback").click();
    await page.getByRole("heading", { name: "Feedback", level: 1 }).waitFor();
    const row = page.getByRole("row").filter({ hasText: "Clear sound" });
    expect((await row.getByRole("cell").nth(4).textContent())?.trim()).toBe("acme (its user's)");
    const listed = (await admin("GET", `/admin/environments/${production.id}/feedback`)).body.feedback;
    expect(listed[0]).toMatchObject({ companyId: null, countsForCompanyId: "acme" });
  });

  it("reviews an import with a summary counted from the rows its table lists, then applies it", async () => {
    const document = {
      format: "switchyard.flags/v1",
      segments: [],
      stages: [],
      features: [
        { key: "brand-new", name: "Brand new", environments: { production: { rules: [{ filter: { type: "constant", value: true } }] } } },
        { key: "export", description: "Changed by the import", environments: { production: { rules: [{ filter: { type: "constant", value: false } }] }, development: { rules: [{ filter: { type: "constant", value: true } }] } } },
      ],
    };
    await page.goto(`${harness.url}/dashboard/#/operations`);
    await page.getByRole("heading", { name: "Backup and flags as files", level: 1 }).waitFor();
    await page.getByLabel("or paste it here").fill(JSON.stringify(document));
    await page.getByRole("button", { name: "Review the changes (dry run)" }).click();
    const review = page.getByRole("region", { name: "What the import would change" });
    await review.getByText("Nothing has changed yet.").waitFor();
    const rows = review.getByRole("row").filter({ has: page.getByRole("rowheader") });
    const changes = (await rows.allTextContents()).length;
    const summary = (await review.locator("p").first().textContent())!;
    const [created, changed] = [Number(/(\d+) created/.exec(summary)![1]), Number(/(\d+) changed/.exec(summary)![1])];
    // The sentence counts exactly the rows the table lists.
    expect(created + changed).toBe(changes);
    expect(await rows.filter({ hasText: "created" }).count()).toBe(created);
    expect(created).toBe(1);
    // export: new rules in production and a description; in development it already serves everyone (its stage, Beta).
    expect(await rows.filter({ hasText: "changed" }).count()).toBe(changed);
    expect(summary).toMatch(/1 created, 1 changed, 1 unchanged/);
    await expectNoSeriousA11yViolations(page, "import review");
    await screenshotWidths(harness, page, "import-review");
    await review.getByRole("button", { name: "Apply these changes" }).click();
    const applied = page.getByRole("region", { name: "What the import changed" });
    await applied.getByText(/^Imported: 1 created, 1 changed, 1 unchanged/).waitFor();
    expect(await applied.getByRole("row").filter({ has: page.getByRole("rowheader") }).count()).toBe(2);
    expect((await admin("GET", `/admin/environments/${production.id}/features/brand-new`)).body.targeting).toMatchObject({ version: 1, rules: [{ filter: { type: "constant", value: true } }] });
    expectCleanConsole(errors);
  });

  it("keeps the header on one row when the new-environment form opens", async () => {
    await page.goto(scoped("features"));
    await page.getByRole("heading", { name: "Features", level: 1 }).waitFor();
    const signOut = page.getByRole("button", { name: "Sign out" });
    const before = (await signOut.boundingBox())!;
    const headerBefore = (await page.locator("header.top").boundingBox())!;
    await page.getByRole("button", { name: "New environment" }).click();
    await page.getByLabel("New environment of Acme").waitFor();
    const after = (await signOut.boundingBox())!;
    expect(after.y).toBe(before.y);
    expect((await page.locator("header.top").boundingBox())!.height).toBe(headerBefore.height);
    await expectNoSeriousA11yViolations(page, "new-environment form open");
    await screenshotWidths(harness, page, "new-environment-open");
    await page.getByRole("button", { name: "Cancel" }).click();
  });
});
