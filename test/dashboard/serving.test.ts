/**
 * How the service serves the dashboard (API.md §9): `/` redirects, `/dashboard/` is the page with a strict CSP,
 * hashed assets are immutable and compressed, and with SWITCHYARD_ADMIN_PORT the dashboard and management API
 * answer only on the admin port while SDK traffic stays on the main one. The page itself loads from the admin port
 * in Chromium without a CSP violation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMember } from "../support/accounts.js";
import { request } from "../support/http.js";
import { navLink, expectCleanConsole, expectNoSeriousA11yViolations, HAS_CHROMIUM, OWNER, screenshot, signInByKeyboard, startHarness, type Harness, keepPagesOfFailedTests } from "./support.js";

describe.runIf(HAS_CHROMIUM)("dashboard serving and the admin port", () => {
  let harness: Harness;
  let adminUrl: string;

  keepPagesOfFailedTests(() => harness);

  beforeAll(async () => {
    harness = await startHarness("serving", { env: { SWITCHYARD_ADMIN_PORT: "0" } });
    const line = harness.server.output.find((each) => each.includes('"message":"listening"'))!;
    adminUrl = `http://127.0.0.1:${(JSON.parse(line) as { adminPort: number }).adminPort}`;
  });
  afterAll(async () => harness?.close());

  it("redirects / to /dashboard/ and serves the page with a strict Content-Security-Policy", async () => {
    const root = await fetch(`${adminUrl}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/dashboard/");
    for (const path of ["/dashboard/", "/dashboard"]) {
      const page = await fetch(`${adminUrl}${path}`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(page.headers.get("cache-control")).toBe("no-cache");
      expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(await page.text()).toContain('<div id="root"></div>');
    }
  });

  it("serves hashed assets as immutable, compressed when accepted, with 304 on a matching ETag", async () => {
    const html = await (await fetch(`${adminUrl}/dashboard/`)).text();
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const style = /href="(\/dashboard\/assets\/[^"]+\.css)"/.exec(html)![1]!;
    const js = await fetch(`${adminUrl}${script}`, { headers: { "accept-encoding": "br" } });
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(js.headers.get("content-encoding")).toBe("br");
    expect(js.headers.get("vary")).toBe("accept-encoding");
    expect((await js.text()).length).toBeGreaterThan(10_000);
    const css = await fetch(`${adminUrl}${style}`, { headers: { "accept-encoding": "gzip" } });
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(css.headers.get("content-encoding")).toBe("gzip");
    const again = await fetch(`${adminUrl}${script}`, { headers: { "if-none-match": js.headers.get("etag")! } });
    expect(again.status).toBe(304);
    const missing = await fetch(`${adminUrl}/dashboard/assets/missing-abc.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe("ROUTE_NOT_FOUND");
  });

  it("keeps the admin surface on the admin port and SDK traffic on the main port", async () => {
    const sdk = harness.server.url;
    expect((await fetch(`${sdk}/dashboard/`)).status).toBe(404);
    expect((await fetch(`${sdk}/admin/setup`)).status).toBe(404);
    expect((await fetch(`${sdk}/features/evaluated`)).status).toBe(401);
    expect((await fetch(`${sdk}/health`)).status).toBe(200);
    expect((await fetch(`${adminUrl}/admin/setup`)).status).toBe(200);
    expect((await fetch(`${adminUrl}/features/evaluated`)).status).toBe(404);
    expect((await fetch(`${adminUrl}/health`)).status).toBe(200);
    // The CLI's browser ends (§10) go where the dashboard is.
    expect((await fetch(`${adminUrl}/cli-login/success`)).status).toBe(200);
    expect((await fetch(`${sdk}/cli-login/success`)).status).toBe(404);
    expect((await fetch(`${sdk}/envs/x-env_nope`)).status).toBe(404);
    expect((await fetch(`${adminUrl}/envs/x-env_nope`)).headers.get("content-type")).toContain("application/json");
  });

  it("loads in Chromium from the admin port with no script error or CSP violation", async () => {
    const { page, errors, context } = await harness.open();
    await page.goto(`${adminUrl}/`);
    await page.getByRole("heading", { name: "Welcome to Switchyard" }).waitFor();
    expect(page.url()).toBe(`${adminUrl}/dashboard/`);
    await expectNoSeriousA11yViolations(page, "first-start page");
    await screenshot(harness, page, "first-start");
    expectCleanConsole(errors);
    await context.close();
  });

  it("fills the SDK snippets with the SDK port when the dashboard is on the admin port", async () => {
    expect(await (await fetch(`${adminUrl}/dashboard/service.json`)).json()).toEqual({ success: true, sdkPort: harness.server.port });
    await createMember(adminUrl, harness.server.adminToken, OWNER.email, "owner");
    expect((await request(adminUrl, "POST", "/admin/apps", { token: harness.server.adminToken, body: { name: "Acme" } })).status).toBe(200);
    const { page, errors, context } = await harness.open();
    await signInByKeyboard(page, adminUrl, OWNER.email, OWNER.password);
    await navLink(page, "Keys & SDKs").click();
    await expect.poll(() => page.getByLabel(/API base URL/).inputValue()).toBe(harness.server.url);
    expect(await page.locator("pre.code").first().textContent()).toContain(`apiBaseUrl: "${harness.server.url}"`);
    expectCleanConsole(errors);
    await context.close();
  });
});
