/**
 * One end-to-end run in real headless Chromium: a page served from another origin loads the browser SDK bundles
 * (the packages' UMD builds) and talks to Switchyard with `credentials: "include"`. So CORS preflights (JSON POSTs
 * with `Authorization` and `*-sdk-version` headers), credentialed responses, the `publishableKey` query on GETs, the
 * `prompting-init` answer and a credentialed EventSource on `/sse/client` all happen for real.
 */
import { CHROMIUM, HAS_CHROMIUM, launchChromium, scriptFiles, servePages, type PageServer } from "../support/chromium.js";
import { createRequire } from "node:module";
import { type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/server.js";
import { adminCall, createFixtureApp, listAll, type AppFixture } from "../sdk/fixtures.js";

const require = createRequire(import.meta.url);

/** The packages' browser-ready builds: their `require` entries are UMD files defining `BucketBrowserSDK` / `ReflagBrowserSDK`. */
const BUNDLES: Record<string, string> = {
  "/bucket-browser-sdk.js": require.resolve("@bucketco/browser-sdk"),
  "/reflag-browser-sdk.js": require.resolve("@reflag/browser-sdk"),
};

function page(config: Record<string, unknown>): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Switchyard SDK page</title>
<script src="/bucket-browser-sdk.js"></script>
<script src="/reflag-browser-sdk.js"></script>
</head><body>
<script id="config" type="application/json">${JSON.stringify(config)}</script>
<script>
  const config = JSON.parse(document.getElementById("config").textContent);
  window.flagUpdates = 0;
  window.run = (async () => {
    const bucket = new BucketBrowserSDK.BucketClient({
      publishableKey: config.publishableKey, apiBaseUrl: config.apiBaseUrl, credentials: "include",
      user: config.user, company: config.company, toolbar: false,
    });
    await bucket.initialize();
    const features = bucket.getFeatures();
    const track = await bucket.track("chromium-clicked", { from: "page" });
    const feedback = await bucket.feedback({ featureKey: "always-on", score: 5 });
    window.reflag = new ReflagBrowserSDK.ReflagClient({
      publishableKey: config.publishableKey, apiBaseUrl: config.apiBaseUrl, credentials: "include",
      user: config.user, company: config.company, toolbar: false, enableLiveFlagUpdates: true,
    });
    window.reflag.on("flagsUpdated", () => window.flagUpdates++);
    await window.reflag.initialize();
    return {
      origin: location.origin,
      features: Object.fromEntries(Object.entries(features).map(([key, f]) => [key, f.isEnabled])),
      reflagFlags: Object.fromEntries(Object.entries(window.reflag.getFlags()).map(([key, f]) => [key, f.isEnabled])),
      trackStatus: track.status,
      feedbackStatus: feedback.status,
    };
  })().catch((error) => ({ error: String(error && error.stack || error) }));
</script></body></html>`;
}

describe("browser SDKs in headless Chromium, from another origin", () => {
  let server: TestServer;
  let fixture: AppFixture;
  let pageServer: PageServer | undefined;
  let pageUrl: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (!HAS_CHROMIUM) return;
    server = await startServer();
    fixture = await createFixtureApp(server.url, server.adminToken, "Chromium");
    const html = page({
      publishableKey: fixture.publishableKey,
      apiBaseUrl: server.url,
      user: { id: "chromium-user", role: "guest", name: "Cam" },
      company: { id: "chromium-co", plan: "enterprise", tier: 4 },
    });
    pageServer = await servePages({ "/": { contentType: "text/html", body: html }, ...scriptFiles(BUNDLES) });
    pageUrl = pageServer.url;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await pageServer?.close();
    await server?.stop();
  });

  it.skipIf(!HAS_CHROMIUM)(`flags, tracking, feedback and live updates work cross-origin with credentials${HAS_CHROMIUM ? "" : ` (skipped: ${CHROMIUM} not found)`}`, async () => {
    const context = await browser!.newContext();
    const tab = await context.newPage();
    const consoleErrors: string[] = [];
    const failedRequests: string[] = [];
    tab.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(`${message.text()} (${message.location().url})`);
    });
    tab.on("pageerror", (error) => consoleErrors.push(String(error)));
    tab.on("requestfailed", (failed) => {
      // Closing the page aborts the open event stream; anything else failing is a real failure.
      if (!failed.url().includes("/sse/client")) failedRequests.push(`${failed.method()} ${failed.url()}: ${failed.failure()?.errorText}`);
    });
    const apiRequests: string[] = [];
    tab.on("requestfinished", (finished) => {
      if (finished.url().startsWith(server.url)) apiRequests.push(`${finished.method()} ${new URL(finished.url()).pathname}`);
    });

    await tab.goto(pageUrl);
    const result = await tab.evaluate(() => (window as unknown as { run: Promise<Record<string, unknown>> }).run);
    expect(result.error).toBeUndefined();
    expect(result.origin).not.toBe(server.url);
    expect(result.trackStatus).toBe(200);
    expect(result.feedbackStatus).toBe(200);
    // The page sees what the rules say for its context (company plan enterprise, tier 4, role guest, named user).
    const expected = { "always-on": true, "enterprise-plan": true, "email-or-not-guest": false, "no-name": false, "beta-web": false, untargeted: false };
    expect(result.features).toMatchObject(expected);
    expect(result.reflagFlags).toMatchObject(expected);
    expect(Object.keys(result.features as object).sort()).toEqual(Object.keys(result.reflagFlags as object).sort());

    // A targeting change reaches the page over the credentialed EventSource on /sse/client.
    await adminCall(server.url, server.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/beta-web/targeting`, {
      rules: [{ filter: { type: "context", field: "user.role", operator: "IS", values: ["guest"] } }],
    });
    await tab.waitForFunction(() => (window as unknown as { reflag: { getFlags(): Record<string, { isEnabled: boolean }> } }).reflag.getFlags()["beta-web"]?.isEnabled === true, null, {
      timeout: 3_000,
      polling: 20,
    });

    const events = await listAll(server.url, server.adminToken, fixture.environmentId, "events", "events");
    expect(events).toContainEqual(expect.objectContaining({ event: "chromium-clicked", userId: "chromium-user", companyId: "chromium-co", attributes: { from: "page" } }));
    const feedback = await listAll(server.url, server.adminToken, fixture.environmentId, "feedback", "feedback");
    expect(feedback).toContainEqual(expect.objectContaining({ userId: "chromium-user", key: "always-on", score: 5 }));
    const user = (await adminCall(server.url, server.adminToken, "GET", `/admin/environments/${fixture.environmentId}/users/chromium-user`)).user;
    expect(user.attributes).toMatchObject({ name: "Cam", role: "guest" });

    // Every kind of call the SDKs make went through, automated-feedback initialisation included.
    expect(apiRequests).toEqual(expect.arrayContaining(["GET /features/evaluated", "POST /event", "POST /feedback", "POST /user", "POST /company", "POST /feedback/prompting-init"]));
    expect(failedRequests).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await context.close();
  });
});
