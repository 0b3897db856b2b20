/**
 * The official browser SDKs, run in Node against a real Switchyard: their evaluation (from
 * `GET /features/evaluated`) must equal the reference evaluator's on the rules the server serves, tracking and
 * two-step feedback must land, and the Reflag SDK's live updates (`GET /sse/client`) must deliver a targeting change.
 */
import { BucketClient } from "@bucketco/browser-sdk";
import { ReflagClient } from "@reflag/browser-sdk";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { FeatureDefinition } from "../../src/evaluation/index.js";
import { evaluateWithReference } from "../parity/reference.js";
import { request } from "../support/http.js";
import type { TestServer } from "../support/server.js";
import { startServerUnderTest, type ServerUnderTest } from "../support/server-under-test.js";
import { fetchEventSourceFactory } from "./fetch-event-source.js";
import { adminCall, createFixtureApp, eventually, FEATURES, listAll, quietLogger, randomContexts, type AppFixture, type SdkContext } from "./fixtures.js";

interface Outcome {
  isEnabled: boolean;
  config: { key: unknown; payload: unknown };
}

/** What the browser SDKs expose per feature, reduced to what must match; absent config and `null` config agree. */
function outcomes(features: Record<string, { isEnabled: boolean; config?: { key?: unknown; payload?: unknown } } | undefined>): Record<string, Outcome> {
  const out: Record<string, Outcome> = {};
  for (const [key, feature] of Object.entries(features)) {
    if (!feature) continue;
    out[key] = { isEnabled: feature.isEnabled, config: { key: feature.config?.key ?? null, payload: feature.config?.payload ?? null } };
  }
  return out;
}

/** `localStorage` for the Bucket SDK, which caches fetched features in it and has no storage option. */
class MemoryStorage {
  private readonly items = new Map<string, string>();
  getItem(key: string) {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string) {
    this.items.set(key, String(value));
  }
  removeItem(key: string) {
    this.items.delete(key);
  }
  clear() {
    this.items.clear();
  }
}

/** The Reflag SDK's async storage adapter, fresh per client so no cached flags leak between tests. */
function memoryStorageAdapter() {
  const items = new Map<string, string>();
  return {
    getItem: async (key: string) => items.get(key) ?? null,
    setItem: async (key: string, value: string) => void items.set(key, value),
    removeItem: async (key: string) => void items.delete(key),
  };
}

const CONTEXTS_PER_SDK = 12;

describe("@bucketco/browser-sdk and @reflag/browser-sdk (in Node) against Switchyard", () => {
  let server: TestServer;
  /** Where rules are written: the same service alone, another node in cluster mode (SWITCHYARD_TEST_CLUSTER=1). */
  let writer: TestServer;
  let underTest: ServerUnderTest;
  let fixture: AppFixture;
  const stops: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    underTest = await startServerUnderTest();
    ({ server, writer } = underTest);
    fixture = await createFixtureApp(writer.url, writer.adminToken, "Browser SDKs");
    // In cluster mode the SDKs' node applies the rules from the log: wait until it serves all of them.
    await eventually(async () => (await request(server.url, "GET", "/features", { token: fixture.secretKey })).body.features?.length === FEATURES.length, 20_000);
  }, 60_000);
  beforeEach(() => {
    (globalThis as { localStorage?: MemoryStorage }).localStorage = new MemoryStorage();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop().catch(() => {});
    delete (globalThis as { localStorage?: MemoryStorage }).localStorage;
  });
  afterAll(async () => {
    await underTest?.stop();
  });

  /** The reference evaluator's answer for `context` on the rules the server serves now. */
  async function reference(context: SdkContext): Promise<Record<string, Outcome>> {
    const rules = await request<{ features: FeatureDefinition[] }>(server.url, "GET", "/features", { token: fixture.secretKey });
    // The reference reports invalid dates (which the contexts include on purpose) on console.error.
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    const results = evaluateWithReference(rules.body.features, context as unknown as Record<string, unknown>);
    quiet.mockRestore();
    return outcomes(Object.fromEntries(results.map((result) => [result.key, result])));
  }

  async function bucketClient(context: SdkContext, logger = quietLogger()): Promise<BucketClient> {
    const client = new BucketClient({
      publishableKey: fixture.publishableKey,
      apiBaseUrl: server.url,
      user: context.user,
      ...(context.company ? { company: context.company } : {}),
      ...(context.other ? { otherContext: context.other } : {}),
      toolbar: false,
      feedback: { enableAutoFeedback: false },
      offline: false,
      logger,
    });
    stops.push(() => client.stop());
    await client.initialize();
    return client;
  }

  async function reflagClient(context: SdkContext, options: { logger?: ReturnType<typeof quietLogger>; live?: ReturnType<typeof fetchEventSourceFactory> } = {}): Promise<ReflagClient> {
    const client = new ReflagClient({
      publishableKey: fixture.publishableKey,
      apiBaseUrl: server.url,
      user: context.user,
      ...(context.company ? { company: context.company } : {}),
      ...(context.other ? { other: context.other } : {}),
      toolbar: false,
      feedback: { enableAutoFeedback: false },
      offline: false,
      storage: memoryStorageAdapter(),
      logger: options.logger ?? quietLogger(),
      ...(options.live ? { enableLiveFlagUpdates: true, eventSourceFactory: options.live.factory } : {}),
    });
    stops.push(() => client.stop());
    await client.initialize();
    return client;
  }

  it(`Bucket: evaluation equals the reference evaluator's on ${CONTEXTS_PER_SDK} contexts`, async () => {
    for (const context of randomContexts(CONTEXTS_PER_SDK, 11, "bb")) {
      const logger = quietLogger();
      const client = await bucketClient(context, logger);
      const features = outcomes(client.getFeatures());
      expect(Object.keys(features).length).toBeGreaterThan(0);
      expect(features, JSON.stringify(context)).toEqual(await reference(context));
      expect(logger.errors).toEqual([]);
    }
  });

  it(`Reflag: evaluation equals the reference evaluator's on ${CONTEXTS_PER_SDK} contexts`, async () => {
    for (const context of randomContexts(CONTEXTS_PER_SDK, 12, "rb")) {
      const logger = quietLogger();
      const client = await reflagClient(context, { logger });
      expect(outcomes(client.getFlags()), JSON.stringify(context)).toEqual(await reference(context));
      expect(logger.errors).toEqual([]);
    }
  });

  for (const sdk of ["bucket", "reflag"] as const) {
    it(`${sdk}: user, company, track and two-step feedback (score, then comment) arrive`, async () => {
      const context: SdkContext = { user: { id: `${sdk}-browser-user`, name: "Dee" }, company: { id: `${sdk}-browser-co`, plan: "business" } };
      const logger = quietLogger();
      let scoreResponse: Response | undefined;
      let sendComment: (feedbackId: string) => Promise<Response | undefined>;
      if (sdk === "bucket") {
        const client = await bucketClient(context, logger);
        expect((await client.track("button-clicked", { button: "buy" }))?.status).toBe(200);
        scoreResponse = await client.feedback({ featureKey: "enterprise-plan", score: 4, question: "How do you like it?" });
        sendComment = (feedbackId) => client.feedback({ featureKey: "enterprise-plan", feedbackId, comment: "Works well" });
      } else {
        const client = await reflagClient(context, { logger });
        expect((await client.track("button-clicked", { button: "buy" }))?.status).toBe(200);
        scoreResponse = await client.feedback({ flagKey: "enterprise-plan", score: 4, question: "How do you like it?" });
        sendComment = (feedbackId) => client.feedback({ flagKey: "enterprise-plan", feedbackId, comment: "Works well" });
        // Reflag queues user/company updates for /bulk; stop() flushes the queue.
        await client.stop();
      }
      expect(scoreResponse?.status).toBe(200);
      const { feedbackId } = (await scoreResponse!.json()) as { feedbackId: string };
      expect(typeof feedbackId).toBe("string");
      expect((await sendComment(feedbackId))?.status).toBe(200);

      const base = `/admin/environments/${fixture.environmentId}`;
      const user = await eventually(async () => (await request(server.url, "GET", `${base}/users/${context.user.id}`, { token: server.adminToken })).body.user);
      expect(user.attributes).toMatchObject({ name: "Dee" });
      const company = await eventually(async () => (await request(server.url, "GET", `${base}/companies/${context.company!.id}`, { token: server.adminToken })).body.company);
      expect(company.attributes).toMatchObject({ plan: "business" });
      expect(company.userIds).toContain(context.user.id);

      // Tracked data is stored when the node applies the tracking log (at once alone, milliseconds later in a cluster).
      const events = await eventually(async () => {
        const all = await listAll(server.url, server.adminToken, fixture.environmentId, "events", "events");
        return all.some((event) => event.userId === context.user.id) && all;
      });
      expect(events.filter((event) => event.userId === context.user.id)).toEqual([
        expect.objectContaining({ event: "button-clicked", companyId: context.company!.id, attributes: { button: "buy" } }),
      ]);
      const myFeedback = async () =>
        (await listAll(server.url, server.adminToken, fixture.environmentId, "feedback", "feedback")).filter((entry) => entry.userId === context.user.id);
      await eventually(async () => (await myFeedback()).some((entry) => entry.comment === "Works well"));
      // An update moves a feedback to the end of the log (a new cursor, the old entry removed in the same commit): a
      // listing paged while a cluster node applied it can hold both versions, so it is read again once the update shows.
      const feedback = await myFeedback();
      // One feedback carrying both the score and the later comment.
      expect(feedback).toEqual([
        expect.objectContaining({ feedbackId, key: "enterprise-plan", score: 4, comment: "Works well", question: "How do you like it?", companyId: context.company!.id, source: "sdk" }),
      ]);
      expect(logger.errors).toEqual([]);
    });
  }

  it("Reflag live updates: a targeting change reaches the client through /sse/client within 3 s", async () => {
    const live = fetchEventSourceFactory();
    const context: SdkContext = { user: { id: "live-user", role: "guest" }, company: { id: "live-co" } };
    const logger = quietLogger();
    const client = await reflagClient(context, { logger, live });
    expect(client.getFlags()["beta-web"]?.isEnabled).toBe(false);
    // The SDK opens its stream after the first fetch, without blocking initialize().
    const stream = await eventually(() => live.opened.find((opened) => opened.status === 200));
    const url = new URL(stream.url);
    expect(url.pathname).toBe("/sse/client");
    expect(url.searchParams.get("publishableKey")).toBe(fixture.publishableKey);
    expect(JSON.parse(url.searchParams.get("context")!)).toEqual({ user: context.user, company: context.company });

    let updates = 0;
    client.on("flagsUpdated", () => updates++);
    const changedAt = Date.now();
    await adminCall(writer.url, writer.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/beta-web/targeting`, {
      rules: [{ filter: { type: "context", field: "user.role", operator: "IS", values: ["guest"] } }],
    });
    await eventually(() => client.getFlags()["beta-web"]?.isEnabled, 3_000, 20);
    expect(Date.now() - changedAt).toBeLessThan(3_000);
    expect(updates).toBeGreaterThan(0);
    expect(stream.received.join("")).toContain('"name":"flags-updated"');

    await adminCall(writer.url, writer.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/beta-web/targeting`, {
      rules: [{ filter: { type: "group", operator: "and", filters: [{ type: "context", field: "user.beta", operator: "IS_TRUE" }, { type: "context", field: "other.platform", operator: "ANY_OF", values: ["web", "ios"] }] } }],
    });
    await eventually(() => client.getFlags()["beta-web"]?.isEnabled === false, 3_000, 20);
    expect(logger.errors).toEqual([]);
  });

  it("Reflag setOptIn: the choice is stored, the version bumped, and the flag then reports it", async () => {
    await adminCall(writer.url, writer.adminToken, "PUT", `/admin/apps/${fixture.appId}/features/untargeted`, { optInEnabled: true });
    const context: SdkContext = { user: { id: "opt-in-user" }, company: { id: "opt-in-co" } };
    const probe = await eventually(async () => {
      const reply = await request(server.url, "GET", `/features/evaluated?publishableKey=${fixture.publishableKey}&context.user.id=opt-in-user&key=untargeted`);
      return reply.body.features?.untargeted?.optInEnabled === true && reply;
    });
    expect(probe.body.features.untargeted).toMatchObject({ optInEnabled: true, optIn: { userOptedIn: false, isOptedIn: false, name: "untargeted" } });
    const client = await reflagClient(context);
    expect(client.getOptInFlags().map((flag) => flag.key)).toContain("untargeted");
    const response = await client.setOptIn("untargeted", { optedIn: true, scope: "user" });
    expect(response?.status).toBe(200);
    expect(client.getFlags().untargeted).toMatchObject({ isEnabled: true, optInEnabled: true, optIn: { userOptedIn: true, isOptedIn: true } });
    await client.setOptIn("untargeted", { optedIn: false, scope: "user" });
    expect(client.getFlags().untargeted).toMatchObject({ isEnabled: false, optIn: { userOptedIn: false } });
  });
});
