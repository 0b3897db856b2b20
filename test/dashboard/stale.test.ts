/**
 * Issue 21 §2 in Chromium: the features list shows the same stale mark as MCP's list_flags, with its reason in words,
 * on a data dir prepared with 40-day-old flags (test/support/stale-data.ts); an SDK check turns "unevaluated" into
 * "constant" on the page.
 */
import { rmSync } from "node:fs";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { planApp } from "../../src/tenancy/tenancy-repository.js";
import { request } from "../support/http.js";
import { NATIVE_MODE } from "../support/server.js";
import { prepareStaleDataDir } from "../support/stale-data.js";
import { createOwner, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, OWNER, screenshot, signInByKeyboard, startHarness, type Harness, keepPagesOfFailedTests } from "./support.js";

describe.runIf(HAS_CHROMIUM)(`dashboard stale badge (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let harness: Harness;
  let page: Page;
  let context: BrowserContext;
  let errors: string[];
  let dataDir: string;
  let planned: ReturnType<typeof planApp>;

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    ({ dataDir, planned } = await prepareStaleDataDir());
    harness = await startHarness("stale", { dataDir });
    await createOwner(harness);
    ({ page, context, errors } = await harness.open());
  });
  afterAll(async () => {
    await context?.close();
    await harness?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** The feature column's text as read on screen (block elements on their own lines, folded to single spaces). */
  const nameText = async (key: string) =>
    (await page.getByRole("row").filter({ has: page.getByRole("link", { name: key, exact: true }) }).getByRole("cell").first().innerText()).replace(/\s+/g, " ").trim();

  it("marks old unevaluated flags stale with the reason, not fresh ones; an SDK check changes the reason", async () => {
    await signInByKeyboard(page, harness.url, OWNER.email, OWNER.password);
    await page.getByRole("link", { name: "forgotten", exact: true }).waitFor();
    expect(await nameText("forgotten")).toBe("forgotten stale nothing evaluated it for 30 days");
    expect(await nameText("everywhere")).toBe("everywhere stale nothing evaluated it for 30 days");
    expect(await nameText("fresh")).toBe("fresh");
    await expectNoSeriousA11yViolations(page, "features list with stale marks");
    await screenshot(harness, page, "stale-unevaluated");

    const production = planned.environments.find((environment) => environment.record.name === "production")!.issued;
    const tracked = await request(harness.url, "POST", "/features/events", { token: production.publishableKey, body: [{ action: "check", key: "everywhere", evalResult: true }] });
    expect(tracked.status).toBe(200);
    await page.reload();
    await page.getByRole("link", { name: "everywhere", exact: true }).waitFor();
    expect(await nameText("everywhere")).toBe("everywhere stale every environment served everyone the same answer for 30 days");
    expect(await nameText("forgotten")).toBe("forgotten stale nothing evaluated it for 30 days");
    await screenshot(harness, page, "stale-constant");
    expectCleanConsole(errors);
  });
});
