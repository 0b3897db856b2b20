/**
 * The OpenFeature web SDK with the official OFREP web provider in real headless Chromium, from another origin
 * (test/browser/openfeature/web-page.ts, bundled here with esbuild from the packages as published): the bulk
 * evaluation through a CORS preflight, values, variants and reasons, a context change, and a targeting change seen at
 * once through the event stream the answer names, with polling off.
 */
import { build } from "esbuild";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HAS_CHROMIUM, launchChromium, servePages, type PageServer } from "../support/chromium.js";
import { startServer, type TestServer } from "../support/server.js";
import { adminCall, createFixtureApp, eventually, type AppFixture } from "../sdk/fixtures.js";

async function bundle(entry: string): Promise<string> {
  const result = await build({ entryPoints: [entry], bundle: true, write: false, format: "iife", target: "es2022", logLevel: "silent" });
  return result.outputFiles[0]!.text;
}

function html(config: Record<string, unknown>): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>OpenFeature page</title></head><body>
<script id="config" type="application/json">${JSON.stringify(config)}</script>
<script src="/web-page.js"></script></body></html>`;
}

type Details = { value: unknown; variant?: string; reason?: string; errorCode?: string; flagMetadata: Record<string, unknown> };

describe.skipIf(!HAS_CHROMIUM)("@openfeature/web-sdk with @openfeature/ofrep-web-provider in headless Chromium", () => {
  let server: TestServer;
  let fixture: AppFixture;
  let pages: PageServer;
  let browser: Browser;
  let page: Page;
  const requested: string[] = [];
  const read = () => page.evaluate(() => (window as unknown as { state: { read(): Record<string, Details> } }).state.read());

  beforeAll(async () => {
    server = await startServer();
    fixture = await createFixtureApp(server.url, server.adminToken, "OpenFeature web");
    const context = { targetingKey: "web-user", role: "guest", company: { id: "web-co", plan: "enterprise", tier: 4, employees: 5000 } };
    pages = await servePages({
      "/": { contentType: "text/html", body: html({ baseUrl: server.url, publishableKey: fixture.publishableKey, context }) },
      "/web-page.js": { contentType: "text/javascript", body: await bundle("test/browser/openfeature/web-page.ts") },
    });
    browser = await launchChromium();
    page = await browser.newPage();
    page.on("request", (request) => requested.push(`${request.method()} ${request.url()}`));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await pages?.close();
    await server?.stop();
  });

  it("evaluates through the bulk endpoint from another origin", async () => {
    await page.goto(pages.url);
    const first = (await page.evaluate(() => (window as unknown as { run: Promise<Record<string, Details> & { error?: string }> }).run)) as Record<string, Details> & { error?: string };
    expect(first.error).toBeUndefined();
    expect(first.alwaysOn).toMatchObject({ value: true, variant: "on", reason: "STATIC", flagMetadata: { configKey: "v1" } });
    expect(first.enterprise).toMatchObject({ value: true, variant: "on", reason: "TARGETING_MATCH" });
    expect(first.enterpriseConfig).toMatchObject({ value: { seats: 100 }, variant: "gold", reason: "TARGETING_MATCH" });
    expect(first.smallConfig).toMatchObject({ value: "big", variant: "large" });
    expect(first.untargeted).toMatchObject({ value: false, variant: "off", reason: "DEFAULT" });
    expect(first.unknown).toMatchObject({ value: true, errorCode: "FLAG_NOT_FOUND" });
    expect(requested.some((entry) => entry.startsWith(`POST ${server.url}/ofrep/v1/evaluate/flags`))).toBe(true);
  });

  it("follows a context change", async () => {
    await page.evaluate(() => (window as unknown as { state: { setContext(c: unknown): Promise<void> } }).state.setContext({ targetingKey: "web-user", company: { id: "web-co", plan: "free" } }));
    // The provider may answer from its cache first (same targetingKey) and refresh from the network right after.
    const after = await eventually(async () => {
      const now = await read();
      return now.enterprise.value === false ? now : undefined;
    }, 5_000);
    expect(after.enterprise).toMatchObject({ value: false, reason: "DEFAULT" });
    // No variant matches now: the caller's default applies.
    expect(after.enterpriseConfig.value).toEqual({ none: true });
  });

  it("sees a targeting change at once through the event stream, with polling off", async () => {
    await eventually(() => requested.some((entry) => entry.startsWith(`GET ${server.url}/ofrep/v1/events?publishableKey=${fixture.publishableKey}`)), 10_000);
    const before = await page.evaluate(() => (window as unknown as { state: { changes: number } }).state.changes);
    await adminCall(server.url, server.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/untargeted/targeting`, {
      rules: [{ filter: { type: "context", field: "user.id", operator: "IS", values: ["web-user"] } }],
    });
    await eventually(async () => (await read()).untargeted.value === true, 5_000);
    expect((await read()).untargeted).toMatchObject({ value: true, reason: "TARGETING_MATCH" });
    expect(await page.evaluate(() => (window as unknown as { state: { changes: number } }).state.changes)).toBeGreaterThan(before);
    expect(await page.evaluate(() => (window as unknown as { state: { errors: string[] } }).state.errors)).toEqual([]);
  });
});
