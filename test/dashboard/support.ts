/**
 * One real server and one headless Debian Chromium per dashboard test file; helpers for signing in, axe-core checks,
 * screenshots and console errors (a Content-Security-Policy violation shows up there and fails the check).
 */
export { CHROMIUM, HAS_CHROMIUM } from "../support/chromium.js";
import { launchChromium } from "../support/chromium.js";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, type Page } from "playwright-core";
import { beforeEach, expect } from "vitest";
import { ACCOUNT_TEST_ENV, createMember, PASSWORD } from "../support/accounts.js";
import { startServer, type StartOptions, type TestServer } from "../support/server.js";
import { parseRoute } from "../../src/dashboard/router.js";

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/** Where every dashboard test file writes its screenshots (one folder per run, printed once). */
const SHOTS_ROOT = process.env.SWITCHYARD_SCREENSHOTS ?? mkdtempSync(join(tmpdir(), "switchyard-dashboard-"));

export interface Harness {
  server: TestServer;
  browser: Browser;
  /** Base URL of the dashboard's origin (the admin port when one is set). */
  url: string;
  shotsDir: string;
  /** Every page `open` made that is still open, oldest first. */
  pages(): Page[];
  /** A fresh browser context and page, with console errors collected into `errors`. */
  open(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; errors: string[] }>;
  close(): Promise<void>;
}

export async function startHarness(name: string, options: StartOptions = {}): Promise<Harness> {
  const server = await startServer({ ...options, env: { ...ACCOUNT_TEST_ENV, ...options.env } });
  const browser = await launchChromium();
  const shotsDir = join(SHOTS_ROOT, name);
  mkdirSync(shotsDir, { recursive: true });
  console.info(`dashboard screenshots: ${shotsDir}`);
  const opened: Page[] = [];
  return {
    server,
    browser,
    url: server.url,
    shotsDir,
    pages: () => opened.filter((page) => !page.isClosed()),
    async open(viewport = { width: 1280, height: 900 }) {
      const context = await browser.newContext({ viewport });
      // A step that cannot happen fails within the test with the locator it waited for, not as a bare test timeout.
      context.setDefaultTimeout(8_000);
      const page = await context.newPage();
      opened.push(page);
      const errors: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(message.text());
      });
      page.on("pageerror", (error) => errors.push(String(error)));
      // The dashboard asks through its own dialogs: a browser dialog (confirm, alert) is a defect, recorded as an error.
      page.on("dialog", (dialog) => {
        errors.push(`browser dialog: ${dialog.message()}`);
        void dialog.dismiss();
      });
      return { context, page, errors };
    },
    async close() {
      await browser.close().catch(() => undefined);
      await server.stop();
    },
  };
}

/**
 * When a test of the file fails, every page its harness has open is kept as it was: a screenshot in the run's
 * screenshot folder and the address and visible text in the log, so a failure on a CI machine can be read later.
 */
export function keepPagesOfFailedTests(harness: () => Harness | undefined): void {
  beforeEach(({ onTestFailed, task }) => {
    onTestFailed(async () => {
      const pages = harness()?.pages() ?? [];
      const name = task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60);
      for (const [index, page] of pages.entries()) {
        const file = `failed-${name}-${index + 1}.png`;
        const shot = await page.screenshot({ path: join(harness()!.shotsDir, file), fullPage: true }).then(() => file, (error: unknown) => `no screenshot (${String(error)})`);
        const text = await page.evaluate(() => document.body?.innerText.slice(0, 2_000) ?? "").catch((error: unknown) => `no text (${String(error)})`);
        console.error(`page ${index + 1} of the failed test "${task.name}" at ${page.url()}, ${shot}:\n${text}`);
      }
    });
  });
}

/** The owner every suite signs in as; created with the admin token through the API. */
export const OWNER = { email: "owner@example.com", password: PASSWORD };

export async function createOwner(harness: Harness): Promise<void> {
  await createMember(harness.url, harness.server.adminToken, OWNER.email, "owner");
}

/** Signs in through the page's own form, by keyboard: Tab to each field, type, Enter. */
export async function signInByKeyboard(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(`${url}/dashboard/`);
  await fillSignIn(page, email, password);
}

/**
 * Signs in on the form a signed-out visit shows (the page stays at its URL), by keyboard; returns once the dashboard
 * settled on its URL (see dashboardSettled).
 */
export async function fillSignIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByRole("heading", { name: "Sign in to Switchyard" }).waitFor();
  await page.getByLabel("Email").focus();
  await page.keyboard.type(email);
  await page.keyboard.press("Tab");
  await page.keyboard.type(password);
  await page.keyboard.press("Enter");
  await page.getByRole("button", { name: "Sign out" }).waitFor();
  await dashboardSettled(page);
}

/**
 * Resolves once the dashboard settled on its URL. `/dashboard/` alone, or a page named without its app, is replaced
 * by the default app's URL once the app list has loaded (src/dashboard/App.tsx): a test navigating before that would
 * be overtaken by the replacement. With no app to name, the page offers to create one and the URL stays.
 */
export async function dashboardSettled(page: Page): Promise<void> {
  const namesApp = page.waitForURL((url) => parseRoute(url.hash.replace(/^#/, "").split("?")[0] || "/").kind !== "default");
  const noApp = page.getByRole("heading", { name: "Create your first app" }).waitFor();
  await Promise.any([namesApp, noApp]);
}

/** Runs axe-core in the page (evaluated over the DevTools protocol, which the page's CSP does not govern). */
export async function expectNoSeriousA11yViolations(page: Page, where: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.slice(0, 3).map((node) => node.target.join(" ")) }));
  });
  const serious = violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical");
  expect(serious, `axe-core on ${where}`).toEqual([]);
}

export async function screenshot(harness: Harness, page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(harness.shotsDir, `${name}.png`), fullPage: true });
}

/** The page at a laptop's width (1366) and a phone's (390), each as a full-page screenshot; the viewport is restored. */
export async function screenshotWidths(harness: Harness, page: Page, name: string): Promise<void> {
  const before = page.viewportSize();
  for (const [width, height] of [[1366, 900], [390, 844]] as const) {
    await page.setViewportSize({ width, height });
    await page.waitForTimeout(100);
    await page.screenshot({ path: join(harness.shotsDir, `${name}-${width}.png`), fullPage: true });
  }
  if (before) await page.setViewportSize(before);
}

/** Answers the page's own confirmation dialog (not the browser's confirm()) with its confirming button. */
export async function confirmInDialog(page: Page, button: string | RegExp): Promise<void> {
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  await dialog.getByRole("button", { name: button }).click();
  await dialog.waitFor({ state: "detached" });
}

/** No script errors and no CSP violations on the page so far. */
export function expectCleanConsole(errors: string[]): void {
  expect(errors.filter((error) => !/Failed to load resource: the server responded with a status of (401|403|400|404)/.test(error))).toEqual([]);
}

export { PASSWORD };

/** A link of the side navigation (the breadcrumb may hold a link of the same name). */
export const navLink = (page: Page, name: string) => page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name, exact: true });
