/**
 * The official node SDKs against a real Switchyard: local evaluation (the SDK runs the reference evaluator on
 * `GET /features`) must equal remote evaluation (`GET /features/evaluated`), tracking must land in the store, and
 * the Reflag SDK's push mode (`flagsPushUrl` → `GET /sse/server`) must pick up a targeting change at once.
 */
import { BucketClient } from "@bucketco/node-sdk";
import { ReflagClient } from "@reflag/node-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { request } from "../support/http.js";
import type { TestServer } from "../support/server.js";
import { startServerUnderTest, type ServerUnderTest } from "../support/server-under-test.js";
import { adminCall, createFixtureApp, FEATURES, eventually, listAll, quietLogger, randomContexts, type AppFixture, type SdkContext } from "./fixtures.js";

/** The part of an evaluated feature both evaluations must agree on. */
interface Outcome {
  isEnabled: boolean;
  config: { key: unknown; payload: unknown };
}

type EvaluatedMap = Record<string, { isEnabled: boolean; config: { key?: unknown; payload?: unknown } }>;

/**
 * Locally a feature without a matching variant has config `{key: undefined, payload: undefined}`; remotely the
 * answer's JSON says `null` for both (API.md §3). The SDKs treat both as "no variant".
 */
function outcomes(evaluated: EvaluatedMap): Record<string, Outcome> {
  const out: Record<string, Outcome> = {};
  for (const [key, feature] of Object.entries(evaluated)) {
    const config = feature.config;
    out[key] = { isEnabled: feature.isEnabled, config: { key: config.key ?? null, payload: config.payload ?? null } };
  }
  return out;
}

const PARITY_CONTEXTS = 200;

describe("@bucketco/node-sdk and @reflag/node-sdk against Switchyard", () => {
  let server: TestServer;
  /** Where rules are written: the same service alone, another node in cluster mode (SWITCHYARD_TEST_CLUSTER=1). */
  let writer: TestServer;
  let underTest: ServerUnderTest;
  let fixture: AppFixture;
  const clients: { flush(): Promise<void> }[] = [];

  beforeAll(async () => {
    underTest = await startServerUnderTest();
    ({ server, writer } = underTest);
    fixture = await createFixtureApp(writer.url, writer.adminToken);
    // In cluster mode the SDKs' node applies the rules from the log: wait until it serves all of them.
    await eventually(async () => (await request(server.url, "GET", "/features", { token: fixture.secretKey })).body.features?.length === FEATURES.length, 20_000);
  }, 60_000);
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    for (const client of clients) (client as { destroy?: () => void }).destroy?.();
    await underTest?.stop();
  });

  function bucketClient(logger = quietLogger()): BucketClient {
    const client = new BucketClient({
      secretKey: fixture.secretKey,
      apiBaseUrl: server.url,
      // NODE_ENV=test (vitest) would make the SDK offline.
      offline: false,
      logger,
      batchOptions: { flushOnExit: false },
    });
    clients.push(client);
    return client;
  }

  function reflagClient(options: { push?: boolean; logger?: ReturnType<typeof quietLogger> } = {}): ReflagClient {
    const client = new ReflagClient({
      secretKey: fixture.secretKey,
      apiBaseUrl: server.url,
      offline: false,
      logger: options.logger ?? quietLogger(),
      batchOptions: { flushOnExit: false },
      ...(options.push ? { flagsSyncMode: "push", flagsPushUrl: `${server.url}/sse/server` } : { flagsSyncMode: "polling" }),
    });
    clients.push(client);
    return client;
  }

  it(`Bucket: getFeatures (local) equals getFeaturesRemote on ${PARITY_CONTEXTS} random contexts`, async () => {
    const logger = quietLogger();
    const client = bucketClient(logger);
    await client.initialize();
    // The reference evaluator reports invalid dates (a case the contexts include on purpose) on console.error.
    const referenceComplaints = vi.spyOn(console, "error").mockImplementation(() => {});
    expect(client.getFeatureDefinitions().map((definition) => definition.key).sort()).toEqual(
      (await request(server.url, "GET", "/features", { token: fixture.secretKey })).body.features.map((feature: { key: string }) => feature.key).sort(),
    );
    let enabledSeen = 0;
    for (const context of randomContexts(PARITY_CONTEXTS, 1, "bucket")) {
      const local = outcomes(client.getFeatures({ ...context, enableTracking: false }) as unknown as EvaluatedMap);
      const remote = outcomes((await client.getFeaturesRemote(undefined, undefined, context)) as unknown as EvaluatedMap);
      expect(remote, JSON.stringify(context)).toEqual(local);
      enabledSeen += Object.values(local).filter((outcome) => outcome.isEnabled).length;
    }
    // The contexts really exercise the rules: some features on, some off.
    expect(enabledSeen).toBeGreaterThan(PARITY_CONTEXTS);
    expect(enabledSeen).toBeLessThan(PARITY_CONTEXTS * 10);
    expect(referenceComplaints).toHaveBeenCalled();
    expect(logger.errors).toEqual([]);
  });

  it(`Reflag: getFlags (local) equals getFlagsRemote on ${PARITY_CONTEXTS} random contexts`, async () => {
    const logger = quietLogger();
    const client = reflagClient({ logger });
    await client.initialize();
    vi.spyOn(console, "error").mockImplementation(() => {});
    const rolloutOutcomes = new Set<boolean>();
    for (const context of randomContexts(PARITY_CONTEXTS, 2, "reflag")) {
      const local = outcomes(client.getFlags({ ...context, enableTracking: false }) as unknown as EvaluatedMap);
      const remote = outcomes((await client.getFlagsRemote(undefined, undefined, context)) as unknown as EvaluatedMap);
      expect(remote, JSON.stringify(context)).toEqual(local);
      rolloutOutcomes.add(local["user-rollout"]!.isEnabled);
    }
    expect([...rolloutOutcomes].sort()).toEqual([false, true]);
    expect(logger.errors).toEqual([]);
  });

  for (const sdk of ["bucket", "reflag"] as const) {
    it(`${sdk}: users, companies, events and feature events arrive`, async () => {
      const userId = `${sdk}-tracked-user`;
      const companyId = `${sdk}-tracked-company`;
      const context: SdkContext = { user: { id: userId, name: "Ann", role: "admin" }, company: { id: companyId, plan: "enterprise", tier: 3 } };
      let flush: () => Promise<void>;
      if (sdk === "bucket") {
        const client = bucketClient();
        await client.initialize();
        await client.updateUser(userId, { attributes: { email: "ann@acme.test" } });
        await client.updateCompany(companyId, { userId, attributes: { employees: 42 } });
        await client.track(userId, "report-exported", { companyId, attributes: { format: "csv" } });
        // Evaluating with tracking on sends user/company and one `evaluate` feature event per feature; reading
        // `isEnabled` of a single feature sends a `check`.
        client.getFeatures({ ...context, enableTracking: true });
        expect(client.getFeature({ ...context, enableTracking: true }, "enterprise-plan").isEnabled).toBe(true);
        flush = () => client.flush();
      } else {
        const client = reflagClient();
        await client.initialize();
        await client.updateUser(userId, { attributes: { email: "ann@acme.test" } });
        await client.updateCompany(companyId, { userId, attributes: { employees: 42 } });
        await client.track(userId, "report-exported", { companyId, attributes: { format: "csv" } });
        client.getFlags({ ...context, enableTracking: true });
        expect(client.getFlag({ ...context, enableTracking: true }, "enterprise-plan").isEnabled).toBe(true);
        flush = () => client.flush();
      }
      await flush();
      const base = `/admin/environments/${fixture.environmentId}`;
      const user = await eventually(async () => (await request(server.url, "GET", `${base}/users/${userId}`, { token: server.adminToken })).body.user);
      expect(user.attributes).toMatchObject({ email: "ann@acme.test", name: "Ann", role: "admin" });
      expect(user.companyIds).toContain(companyId);
      // Tracked data is stored when the node applies the tracking log (at once alone, milliseconds later in a cluster).
      const company = await eventually(async () => (await request(server.url, "GET", `${base}/companies/${companyId}`, { token: server.adminToken })).body.company);
      expect(company.attributes).toMatchObject({ employees: 42, plan: "enterprise", tier: 3 });
      expect(company.userIds).toContain(userId);

      const events = await eventually(async () => {
        const all = await listAll(server.url, server.adminToken, fixture.environmentId, "events", "events");
        return all.some((event) => event.userId === userId) && all;
      });
      expect(events.filter((event) => event.userId === userId)).toEqual([
        expect.objectContaining({ event: "report-exported", userId, companyId, attributes: { format: "csv" } }),
      ]);
      const featureEvents = await eventually(async () => {
        const mine = (await listAll(server.url, server.adminToken, fixture.environmentId, "feature-events", "featureEvents")).filter((event) =>
          JSON.stringify(event.evalContext).includes(userId),
        );
        return mine.some((event) => event.action === "check") && mine;
      });
      expect(featureEvents).toContainEqual(expect.objectContaining({ action: "check", key: "enterprise-plan", evalResult: true, targetingVersion: 1 }));
      if (sdk === "bucket") {
        // The Bucket SDK also reports every local evaluation (the Reflag one 1.7 reports checks only).
        const evaluated = featureEvents.filter((event) => event.action === "evaluate").map((event) => event.key);
        expect(new Set(evaluated)).toEqual(new Set(FEATURES.map((feature) => feature.key)));
        // Features with a matching variant also report it.
        expect(featureEvents).toContainEqual(
          expect.objectContaining({ action: "evaluate-config", key: "enterprise-plan", evalResult: { key: "gold", payload: { seats: 100 } } }),
        );
      }
    });
  }

  it("Reflag push mode: a targeting change reaches getFlags through /sse/server within 3 s", async () => {
    const logger = quietLogger();
    const client = reflagClient({ push: true, logger });
    await client.initialize();
    const context: SdkContext = { user: { id: "push-user" }, company: { id: "push-co", plan: "free" } };
    expect(client.getFlags({ ...context, enableTracking: false })["enterprise-plan"]!.isEnabled).toBe(false);

    const changedAt = Date.now();
    await adminCall(writer.url, writer.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/enterprise-plan/targeting`, {
      rules: [{ filter: { type: "context", field: "company.plan", operator: "ANY_OF", values: ["enterprise", "business", "free"] } }],
    });
    // Polling would take 60 s; only the push channel can deliver this in time.
    await eventually(() => client.getFlags({ ...context, enableTracking: false })["enterprise-plan"]!.isEnabled, 3_000, 20);
    expect(Date.now() - changedAt).toBeLessThan(3_000);

    // Put it back for the other tests, and see that change arrive too.
    await adminCall(writer.url, writer.adminToken, "PUT", `/admin/environments/${fixture.environmentId}/features/enterprise-plan/targeting`, {
      rules: [{ filter: { type: "context", field: "company.plan", operator: "ANY_OF", values: ["enterprise", "business"] } }],
    });
    await eventually(() => !client.getFlags({ ...context, enableTracking: false })["enterprise-plan"]!.isEnabled, 3_000, 20);
    expect(logger.errors).toEqual([]);
  });
});
