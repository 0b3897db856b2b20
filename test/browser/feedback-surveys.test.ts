/**
 * Automated feedback surveys with the official browser SDKs in headless Chromium (issue 18 §5): the page (from
 * another origin) runs `@bucketco/browser-sdk` 3.3.3 or `@reflag/browser-sdk` 1.6.1 with automated feedback on and
 * `sseBaseUrl` at Switchyard; a user who qualifies gets the prompt within 2 s of the use that qualifies them and
 * answers it (through a custom handler, and in the SDK's own dialog, where another user dismisses it); one who
 * does not qualify never gets it; the Bucket SDK's cached token from another environment is
 * refused with an Ably token error, which makes the SDK forget it.
 */
import { HAS_CHROMIUM, launchChromium, scriptFiles, servePages, type PageServer } from "../support/chromium.js";
import { createRequire } from "node:module";
import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminRequest, createApp, request } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";
import { eventually, listAll } from "../sdk/fixtures.js";

const require = createRequire(import.meta.url);
const BUNDLES: Record<string, string> = {
  "/bucket-browser-sdk.js": require.resolve("@bucketco/browser-sdk"),
  "/reflag-browser-sdk.js": require.resolve("@reflag/browser-sdk"),
  // The older tracking client's browser build (global `bucket`); its package `browser` field names it.
  "/bucket-tracking-sdk.js": require.resolve("@bucketco/tracking-sdk").replace(/bucket-tracking-sdk\.node\.js$/, "bucket-tracking-sdk.browser.js"),
};

/** The page: `start(sdk, userId)` makes a client whose prompt handler records each prompt and answers it. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Surveys</title>
<script src="/bucket-browser-sdk.js"></script>
<script src="/reflag-browser-sdk.js"></script>
<script src="/bucket-tracking-sdk.js"></script>
</head><body><script>
  window.prompts = [];
  window.answers = [];
  window.errors = [];
  window.clients = {};
  const logger = {
    debug() {}, info() {},
    warn(message, ...args) { window.errors.push("warn " + message + " " + args.map(String).join(" ")); },
    error(message, ...args) { window.errors.push("error " + message + " " + args.map(String).join(" ")); },
  };
  // ui: the SDK's own prompt handler, which opens its feedback dialog.
  window.start = async (sdk, config, userId, ui) => {
    const autoFeedbackHandler = (prompt, handlers) => {
      window.prompts.push({ userId, question: prompt.question, promptId: prompt.promptId, featureId: prompt.featureId, at: Date.now() });
      handlers.reply({ score: 4, comment: "Works for me" }).then((answer) => window.answers.push({ userId, answer }));
    };
    const options = {
      publishableKey: config.publishableKey, apiBaseUrl: config.apiBaseUrl, sseBaseUrl: config.apiBaseUrl,
      user: { id: userId }, toolbar: false, logger, feedback: ui ? {} : { autoFeedbackHandler },
    };
    const client = sdk === "bucket" ? new BucketBrowserSDK.BucketClient(options) : new ReflagBrowserSDK.ReflagClient(options);
    await client.initialize();
    window.clients[userId] = client;
  };
  // @bucketco/tracking-sdk 2.4.0: a singleton on the tracking API; user() starts its live satisfaction channel.
  window.startLegacy = async (config, userId) => {
    bucket.init(config.trackingKey, {
      host: config.apiBaseUrl, sseHost: config.apiBaseUrl,
      feedback: { liveSatisfactionHandler: (prompt, handlers) => {
        window.prompts.push({ userId, question: prompt.question, promptId: prompt.promptId, featureId: prompt.featureId, at: Date.now() });
        handlers.reply({ score: 2, comment: "Legacy prompt answered" }).then((answer) => window.answers.push({ userId, answer }));
      } },
    });
    const response = await bucket.user(userId, { name: "Lee" });
    if (response.status !== 200) throw new Error("user failed");
    window.clients[userId] = { track: (event) => bucket.track(event) };
  };
  window.use = async (userId, event, times) => {
    for (let i = 0; i < times; i++) {
      const response = await window.clients[userId].track(event);
      if (!response || response.status !== 200) throw new Error("track failed");
    }
    return Date.now();
  };
</script></body></html>`;

type Sdk = "bucket" | "reflag";

describe("automated feedback surveys with the browser SDKs in Chromium", () => {
  let server: TestServer;
  let app: Awaited<ReturnType<typeof createApp>>;
  let other: Awaited<ReturnType<typeof createApp>>;
  let featureId: string;
  let pageServer: PageServer | undefined;
  let pageUrl: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (!HAS_CHROMIUM) return;
    server = await startServer();
    app = await createApp(server.url, server.adminToken, "Surveys in Chromium");
    other = await createApp(server.url, server.adminToken, "Another app");
    featureId = (await adminRequest(server, "PUT", `/admin/apps/${app.app.id}/features/huddle`, {})).body.feature.id;
    await adminRequest(server, "PUT", `/admin/environments/${app.production.id}/features/huddle/survey`, { question: "How are huddles?", afterUses: 3, quietPeriodDays: 30 });
    await adminRequest(server, "PUT", `/admin/apps/${other.app.id}/features/huddle`, {});
    await adminRequest(server, "PUT", `/admin/environments/${other.production.id}/features/huddle/survey`, { question: "Other?", afterUses: 1 });
    pageServer = await servePages({ "/": { contentType: "text/html", body: PAGE }, ...scriptFiles(BUNDLES) });
    pageUrl = pageServer.url;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await pageServer?.close();
    await server?.stop();
  });

  const config = () => ({ publishableKey: app.production.publishableKey, apiBaseUrl: server.url });

  /**
   * Starts a client for `userId` and resolves once its prompt stream is open: the Bucket SDK's `GET /sse` on the
   * channel from `prompting-init`; the Reflag SDK's `GET /sse/client` (flag updates and prompts on one stream).
   */
  async function startClient(tab: Page, sdk: Sdk, userId: string, ui = false): Promise<void> {
    const path = sdk === "bucket" ? "/sse?" : "/sse/client?";
    const streamOpen = tab.waitForResponse((response) => response.url().startsWith(`${server.url}${path}`) && response.url().includes(encodeURIComponent(userId)) === (sdk === "reflag") && response.status() === 200);
    await tab.evaluate(([name, settings, user, withUi]) => (window as any).start(name, settings, user, withUi), [sdk, config(), userId, ui] as const);
    await streamOpen;
  }

  async function openPage(): Promise<Page> {
    const tab = await browser!.newPage();
    await tab.goto(pageUrl);
    return tab;
  }

  for (const sdk of ["bucket", "reflag"] as const) {
    it.skipIf(!HAS_CHROMIUM)(`${sdk}: a qualifying user gets the prompt within 2 s and answers it; a non-qualifying one never gets it`, async () => {
      const tab = await openPage();
      const asked = `${sdk}-asked`;
      const unasked = `${sdk}-unasked`;
      await startClient(tab, sdk, unasked);
      await startClient(tab, sdk, asked);
      await tab.evaluate(([user]) => (window as any).use(user, "huddle", 2), [unasked] as const);
      await tab.evaluate(([user]) => (window as any).use(user, "huddle", 2), [asked] as const);
      expect(await tab.evaluate(() => (window as any).prompts.length)).toBe(0);

      // The third use qualifies the user (afterUses: 3): the prompt must reach the page within 2 s of it.
      await tab.evaluate(([user]) => (window as any).use(user, "huddle", 1), [asked] as const);
      await tab.waitForFunction((user) => (window as any).prompts.some((prompt: { userId: string }) => prompt.userId === user), asked, { timeout: 2_000, polling: 10 });
      const prompts = (await tab.evaluate(() => (window as any).prompts)) as { userId: string; question: string; promptId: string; featureId: string }[];
      expect(prompts).toEqual([expect.objectContaining({ userId: asked, question: "How are huddles?", featureId })]);
      const promptId = prompts[0]!.promptId;

      // The answer is stored as feedback naming the prompt, and counts in the feature's satisfaction.
      await tab.waitForFunction((user) => (window as any).answers.some((answer: { userId: string }) => answer.userId === user), asked, { timeout: 5_000 });
      const feedback = await listAll(server.url, server.adminToken, app.production.id, "feedback", "feedback");
      expect(feedback).toContainEqual(
        expect.objectContaining({ userId: asked, featureId, key: "huddle", score: 4, comment: "Works for me", promptId, promptedQuestion: "How are huddles?", source: "prompt" }),
      );
      // Prompt events go out as the SDK sends them (the Reflag one through its /bulk queue).
      const events = await eventually(async () => {
        const all = await listAll(server.url, server.adminToken, app.production.id, "prompt-events", "promptEvents");
        const mine = all.filter((event) => event.promptId === promptId);
        return mine.length >= 2 ? mine : undefined;
      });
      expect(events.map((event) => event.action).sort()).toEqual(["received", "shown"]);
      const analytics = await adminRequest(server, "GET", `/admin/environments/${app.production.id}/analytics/features`);
      const huddle = analytics.body.features.find((feature: { key: string }) => feature.key === "huddle");
      expect(huddle.satisfaction.count).toBeGreaterThanOrEqual(1);

      // The unasked user's uses were checked in the same way: still two uses, still no prompt.
      expect((await tab.evaluate(() => (window as any).prompts)).filter((prompt: { userId: string }) => prompt.userId === unasked)).toEqual([]);
      const stored = await listAll(server.url, server.adminToken, app.production.id, "prompt-events", "promptEvents");
      expect(stored.filter((event) => event.userId === unasked)).toEqual([]);
      expect(await tab.evaluate(() => (window as any).errors)).toEqual([]);
      await tab.close();
    });
  }

  for (const sdk of ["bucket", "reflag"] as const) {
    it.skipIf(!HAS_CHROMIUM)(`${sdk}: the SDK's own feedback dialog opens within 2 s; one user answers in it, another dismisses it`, async () => {
      const dialog = `#${sdk}-feedback-dialog-container`;
      for (const [userId, answers] of [[`${sdk}-dialog-answers`, true], [`${sdk}-dialog-dismisses`, false]] as const) {
        const tab = await openPage();
        await startClient(tab, sdk, userId, true);
        await tab.evaluate(([user]) => (window as any).use(user, "huddle", 3), [userId] as const);
        // Playwright's CSS selectors reach into the dialog's open shadow root.
        await tab.waitForSelector(`${dialog} .title:has-text("How are huddles?")`, { timeout: 2_000 });
        if (answers) {
          // The score goes out at once; the comment follows as an update of the same feedback (its feedbackId).
          await tab.click(`${dialog} label[for="${sdk}-feedback-score-5"]`);
          await tab.fill(`${dialog} textarea[name="comment"]`, "Clear and quick");
          await tab.click(`${dialog} button[type="submit"]:not([disabled])`);
          const mine = await eventually(async () => {
            const all = await listAll(server.url, server.adminToken, app.production.id, "feedback", "feedback");
            const found = all.filter((entry) => entry.userId === userId);
            return found.length === 1 && found[0]!.comment === "Clear and quick" ? found : undefined;
          });
          expect(mine[0]).toMatchObject({ featureId, score: 5, source: "prompt", promptedQuestion: "How are huddles?", promptId: expect.any(String) });
        } else {
          await tab.click(`${dialog} button.close`);
          const dismissed = await eventually(async () => {
            const all = await listAll(server.url, server.adminToken, app.production.id, "prompt-events", "promptEvents");
            return all.find((event) => event.userId === userId && event.action === "dismissed");
          });
          expect(dismissed).toMatchObject({ featureId, promptedQuestion: "How are huddles?" });
          const feedback = await listAll(server.url, server.adminToken, app.production.id, "feedback", "feedback");
          expect(feedback.filter((entry) => entry.userId === userId)).toEqual([]);
        }
        expect(await tab.evaluate(() => (window as any).errors)).toEqual([]);
        await tab.close();
      }
    });
  }

  it.skipIf(!HAS_CHROMIUM)("@bucketco/tracking-sdk 2.4.0: live satisfaction on the tracking API gets the prompt within 2 s and answers it", async () => {
    const tab = await openPage();
    const userId = "legacy-asked";
    const streamOpen = tab.waitForResponse((response) => response.url().startsWith(`${server.url}/sse?`) && response.status() === 200);
    await tab.evaluate(([settings, user]) => (window as any).startLegacy(settings, user), [{ trackingKey: app.app.trackingKey, apiBaseUrl: server.url }, userId] as const);
    await streamOpen;
    await tab.evaluate(([user]) => (window as any).use(user, "huddle", 2), [userId] as const);
    expect(await tab.evaluate(() => (window as any).prompts.length)).toBe(0);
    await tab.evaluate(([user]) => (window as any).use(user, "huddle", 1), [userId] as const);
    await tab.waitForFunction((user) => (window as any).prompts.some((prompt: { userId: string }) => prompt.userId === user), userId, { timeout: 2_000, polling: 10 });
    const [prompt] = (await tab.evaluate(() => (window as any).prompts)) as { promptId: string; featureId: string; question: string }[];
    expect(prompt).toMatchObject({ featureId, question: "How are huddles?" });
    await tab.waitForFunction((user) => (window as any).answers.some((answer: { userId: string }) => answer.userId === user), userId, { timeout: 5_000 });
    const feedback = await listAll(server.url, server.adminToken, app.production.id, "feedback", "feedback");
    expect(feedback).toContainEqual(expect.objectContaining({ userId, featureId, promptId: prompt!.promptId, score: 2, source: "prompt" }));
    const events = await listAll(server.url, server.adminToken, app.production.id, "prompt-events", "promptEvents");
    expect(events.filter((event) => event.promptId === prompt!.promptId).map((event) => event.action).sort()).toEqual(["received", "shown"]);
    expect(await tab.evaluate(() => (window as any).errors)).toEqual([]);
    await tab.close();
  });

  it.skipIf(!HAS_CHROMIUM)("bucket: a cached token from another environment is refused, and the SDK forgets it", async () => {
    const userId = "crossed";
    // The user qualifies in this environment already.
    for (let use = 0; use < 3; use++) await request(server.url, "POST", "/event", { token: app.production.publishableKey, body: { event: "huddle", userId } });
    const channel = (await request(server.url, "POST", "/feedback/prompting-init", { token: app.production.publishableKey, body: { userId } })).body.channel as string;
    // A genuine token, for the same user id, from the other app's environment.
    await request(server.url, "POST", "/feedback/prompting-init", { token: other.production.publishableKey, body: { userId } });
    const auth = await request(server.url, "GET", `/feedback/prompting-auth?userId=${userId}&publishableKey=${other.production.publishableKey}`);
    const { success: _success, ...tokenRequest } = auth.body;
    const foreign = (await request(server.url, "POST", `/keys/${tokenRequest.keyName}/requestToken`, { body: tokenRequest })).body.token as string;

    const tab = await openPage();
    // The SDK's token cache (a cookie) holds this environment's channel with the other environment's token.
    await tab.evaluate(([name, value]) => (document.cookie = `${name}=${encodeURIComponent(value)}; path=/`), [`bucket-token-${userId}`, JSON.stringify({ channel, token: foreign })] as const);
    const refusedStream = tab.waitForResponse((response) => response.url().startsWith(`${server.url}/sse?`) && response.url().includes(encodeURIComponent(foreign).slice(0, 20)));
    await tab.evaluate(([settings, user]) => (window as any).start("bucket", settings, user), [config(), userId] as const);
    await refusedStream;
    // The refusal is an Ably token error (40000–49999): the SDK drops the cached token.
    await tab.waitForFunction((name) => !document.cookie.includes(name), `bucket-token-${userId}`, { timeout: 5_000 });
    expect(await tab.evaluate(() => (window as any).prompts)).toEqual([]);
    expect((await tab.evaluate(() => (window as any).errors)).join("\n")).toMatch(/token expired, refresh required/);
    await tab.close();
  });
});
