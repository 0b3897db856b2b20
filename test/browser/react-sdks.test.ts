/**
 * The official React SDKs in headless Chromium (issue 18 §6): `@reflag/react-sdk` 1.6.2 and `@bucketco/react-sdk`
 * 3.3.2, each in a small React page (test/browser/react/, bundled here with esbuild from the packages as published)
 * served from another origin. The provider, the flag hook (with its remote config), `track`, feedback, live flag
 * updates (Reflag; the Bucket SDK has none) and an automated feedback prompt all run against a real Switchyard.
 */
import { HAS_CHROMIUM, launchChromium, servePages, type PageServer } from "../support/chromium.js";
import { build } from "esbuild";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRequest, createApp } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";
import { eventually, listAll } from "../sdk/fixtures.js";

const PAGES = { reflag: "test/browser/react/reflag-page.tsx", bucket: "test/browser/react/bucket-page.tsx" } as const;
type Sdk = keyof typeof PAGES;
const USERS: Record<Sdk, string> = { reflag: "reflag-react-user", bucket: "bucket-react-user" };

async function bundle(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "iife",
    jsx: "automatic",
    target: "es2022",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

describe("React SDKs in headless Chromium", () => {
  let server: TestServer;
  let app: Awaited<ReturnType<typeof createApp>>;
  let featureId: string;
  let pageServer: PageServer | undefined;
  let pageUrl: string;
  let browser: Browser | undefined;
  const bundles: Partial<Record<Sdk, string>> = {};

  beforeAll(async () => {
    if (!HAS_CHROMIUM) return;
    server = await startServer();
    app = await createApp(server.url, server.adminToken, "React pages");
    const env = app.production.id;
    featureId = (await adminRequest(server, "PUT", `/admin/apps/${app.app.id}/features/huddle`, {})).body.feature.id;
    // On for the Bucket page's user only; the Reflag page's user gets it by a live change.
    await adminRequest(server, "PUT", `/admin/environments/${env}/features/huddle/targeting`, {
      rules: [{ filter: { type: "context", field: "user.id", operator: "IS", values: [USERS.bucket] } }],
    });
    await adminRequest(server, "PUT", `/admin/environments/${env}/features/huddle/config`, {
      variants: [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] }, key: "blue", payload: { color: "blue" } }],
    });
    await adminRequest(server, "PUT", `/admin/environments/${env}/features/huddle/survey`, { question: "How do you like huddles in React?", afterUses: 2, quietPeriodDays: 30 });
    for (const sdk of Object.keys(PAGES) as Sdk[]) bundles[sdk] = await bundle(PAGES[sdk]);
    const pages: Record<string, { contentType: string; body: string }> = {};
    for (const sdk of Object.keys(PAGES) as Sdk[]) {
      const config = { publishableKey: app.production.publishableKey, apiBaseUrl: server.url, user: { id: USERS[sdk], name: "Rea" }, company: { id: `${sdk}-co`, plan: "pro" } };
      pages[`/${sdk}.js`] = { contentType: "text/javascript", body: bundles[sdk]! };
      pages[`/${sdk}.html`] = {
        contentType: "text/html",
        body: `<!doctype html><html><head><meta charset="utf-8"><title>${sdk}</title></head><body>
<div id="root"></div><script>window.CONFIG = ${JSON.stringify(config)};</script><script src="/${sdk}.js"></script></body></html>`,
      };
    }
    pageServer = await servePages(pages);
    pageUrl = pageServer.url;
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await pageServer?.close();
    await server?.stop();
  });

  /** Opens the SDK's page; `stream` resolves when its live stream (`streamPath`) answers, watched from before the load. */
  async function open(sdk: Sdk, streamPath: string): Promise<{ tab: Page; problems: string[]; stream: Promise<unknown> }> {
    const tab = await browser!.newPage();
    const problems: string[] = [];
    tab.on("pageerror", (error) => problems.push(String(error)));
    tab.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    // Registered before navigating: the stream may well answer before the page's load event.
    const stream = tab.waitForResponse((response) => response.url().startsWith(`${server.url}${streamPath}`));
    await tab.goto(`${pageUrl}${sdk}.html`);
    return { tab, problems, stream };
  }

  const pageState = (tab: Page) => tab.evaluate(() => (window as unknown as { page: Record<string, any> }).page);

  async function click(tab: Page, id: string, field: string): Promise<unknown> {
    await tab.evaluate((name) => delete (window as unknown as { page: Record<string, unknown> }).page[name], field);
    await tab.click(`#${id}`);
    await tab.waitForFunction((name) => (window as unknown as { page: Record<string, unknown> }).page[name] !== undefined, field, { timeout: 5_000 });
    return (await pageState(tab))[field];
  }

  /** Uses, custom events, feedback and the prompt's answer, as stored. */
  async function checkStored(sdk: Sdk, promptId: string): Promise<void> {
    const env = app.production.id;
    const user = USERS[sdk];
    const events = await listAll(server.url, server.adminToken, env, "events", "events");
    expect(events.filter((event) => event.userId === user && event.event === "huddle")).toHaveLength(2);
    expect(events).toContainEqual(expect.objectContaining({ event: "react-clicked", userId: user, companyId: `${sdk}-co`, attributes: { from: sdk } }));
    const feedback = await listAll(server.url, server.adminToken, env, "feedback", "feedback");
    expect(feedback).toContainEqual(expect.objectContaining({ userId: user, key: "huddle", score: 5, comment: `${sdk === "reflag" ? "Reflag" : "Bucket"} React works` }));
    expect(feedback).toContainEqual(expect.objectContaining({ userId: user, featureId, promptId, score: 3, comment: "Asked from React", source: "prompt" }));
    // The Reflag SDK queues user and company calls on its /bulk queue (2 s by default).
    const stored = await eventually(async () => {
      const reply = await adminRequest(server, "GET", `/admin/environments/${env}/users/${user}`);
      return reply.body.user?.attributes?.name === "Rea" ? reply.body.user : undefined;
    });
    expect(stored).toMatchObject({ attributes: { name: "Rea" }, companyIds: [`${sdk}-co`] });
    const features = (await adminRequest(server, "GET", `/admin/environments/${env}/feature-events?limit=1000`)).body.featureEvents as { key: string; action: string; evalContext: unknown }[];
    expect(features.some((event) => event.key === "huddle" && event.action.startsWith("check"))).toBe(true);
  }

  /** Two uses of the flag qualify the user for the survey: the prompt must reach the page within 2 s of the second. */
  async function qualifyAndAnswer(tab: Page): Promise<string> {
    expect(await click(tab, "use", "used")).toBe(200);
    expect((await pageState(tab)).prompts).toEqual([]);
    expect(await click(tab, "use", "used")).toBe(200);
    await tab.waitForFunction(() => (window as unknown as { page: { prompts: unknown[] } }).page.prompts.length > 0, null, { timeout: 2_000, polling: 10 });
    const [prompt] = (await pageState(tab)).prompts as { question: string; promptId: string; featureId: string }[];
    expect(prompt).toMatchObject({ question: "How do you like huddles in React?", featureId });
    // The answer (posted by the SDK from the handler) is stored.
    await eventually(async () => {
      const feedback = await listAll(server.url, server.adminToken, app.production.id, "feedback", "feedback");
      return feedback.some((entry) => entry.promptId === prompt!.promptId);
    });
    return prompt!.promptId;
  }

  it.skipIf(!HAS_CHROMIUM)("@reflag/react-sdk 1.6.2: provider, useFlag with config, track, feedback, a live flag change and a survey prompt", async () => {
    const { tab, problems, stream } = await open("reflag", "/sse/client?");
    // Wait for the live stream so that the change below is pushed, not fetched on load.
    await stream;
    await tab.waitForSelector("#huddle:has-text('huddle off')");
    expect(await tab.textContent("#variant")).toBe("blue");
    expect((await pageState(tab)).configPayload).toEqual({ color: "blue" });
    expect(await click(tab, "event", "tracked")).toBe(200);
    expect(await click(tab, "feedback", "feedback")).toBe(200);

    // A targeting change reaches the rendered page over the live stream.
    await adminRequest(server, "PUT", `/admin/environments/${app.production.id}/features/huddle/targeting`, {
      rules: [{ filter: { type: "context", field: "user.id", operator: "ANY_OF", values: [USERS.bucket, USERS.reflag] } }],
    });
    await tab.waitForSelector("#huddle:has-text('huddle on')", { timeout: 5_000 });

    const promptId = await qualifyAndAnswer(tab);
    await checkStored("reflag", promptId);
    expect(problems).toEqual([]);
    await tab.close();
  });

  it.skipIf(!HAS_CHROMIUM)("@bucketco/react-sdk 3.3.2: provider, useFeature with config, track, feedback and a survey prompt over its live channel", async () => {
    const { tab, problems, stream } = await open("bucket", "/sse?");
    await stream;
    await tab.waitForSelector("#huddle:has-text('huddle on')");
    expect(await tab.textContent("#variant")).toBe("blue");
    expect((await pageState(tab)).configPayload).toEqual({ color: "blue" });
    expect(await click(tab, "event", "tracked")).toBe(200);
    expect(await click(tab, "feedback", "feedback")).toBe(200);
    const promptId = await qualifyAndAnswer(tab);
    await checkStored("bucket", promptId);
    expect(problems).toEqual([]);
    await tab.close();
  });
});
