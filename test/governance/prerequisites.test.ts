/**
 * Prerequisites (API.md §15) over real HTTP: a feature is on for a context only when each prerequisite's access is
 * (or, `enabled: false`, is not) on for it, transitively, the parent's kill switch included. The server's answers,
 * the rules `GET /features` serves (the parent's tree compiled in) and the official node SDK's local evaluation of
 * them agree. Cycles, unknown features and the feature itself are refused naming the path; a feature others depend on
 * cannot be archived; a write steps flagStateVersion once, with history and audit entries, and obeys the policy.
 */
import { hashInt } from "@bucketco/flag-evaluation";
import { ReflagClient } from "@reflag/node-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, signIn } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { openSse } from "../support/sse.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";
import { quietLogger } from "../sdk/fixtures.js";

const PRO = { type: "context", field: "company.plan", operator: "IS", values: ["pro"] };
/** A rollout keyed on the parent's own key: the child's copy must hash each user exactly as the parent does. */
const BILLING_ROLLOUT = { type: "rolloutPercentage", key: "billing", partialRolloutAttribute: "user.id", partialRolloutThreshold: 40_000 };
const EVERYONE = [{ filter: { type: "constant", value: true } }];
const USERS = Array.from({ length: 240 }, (_, index) => ({ user: { id: `user-${index}` }, company: { id: `company-${index % 7}`, ...(index % 3 === 0 ? {} : { plan: index % 3 === 1 ? "pro" : "free" }) } }));

type Features = Record<string, { isEnabled: boolean; ruleEvaluationResults: boolean[] }>;

describe(`prerequisites (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  let sdk: ReflagClient;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const production = () => `/admin/environments/${keys.production.id}`;
  const development = () => `/admin/environments/${keys.development.id}`;
  const flagStateVersion = async () => (await admin("GET", `${production()}/features`)).body.flagStateVersion as number;
  const putPrerequisites = (key: string, prerequisites: unknown, environment = production()) => admin("PUT", `${environment}/features/${key}/prerequisites`, { prerequisites });
  const queryOf = (context: (typeof USERS)[number]) =>
    [`context.user.id=${context.user.id}`, `context.company.id=${context.company.id}`, ...("plan" in context.company ? [`context.company.plan=${context.company.plan}`] : [])].join("&");
  const evaluated = async (context: (typeof USERS)[number]): Promise<Features> =>
    (await request(server.url, "GET", `/features/evaluated?${queryOf(context)}&publishableKey=${keys.production.publishableKey}`)).body.features;

  /** Every context through the server and the node SDK (after it fetched `version`): both must say the same. */
  async function everyAnswer(version: number): Promise<{ context: (typeof USERS)[number]; on: Record<string, boolean> }[]> {
    await sdk.refreshFlags(version);
    const answers = [];
    for (const context of USERS) {
      const server = await evaluated(context);
      const on = Object.fromEntries(Object.entries(server).map(([key, item]) => [key, item.isEnabled]));
      const local = sdk.getFlags({ ...context, enableTracking: false });
      expect(Object.fromEntries(Object.entries(local).map(([key, flag]) => [key, flag.isEnabled])), JSON.stringify(context)).toEqual(on);
      answers.push({ context, on });
    }
    return answers;
  }

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken);
    for (const key of ["billing", "invoices", "legacy-invoices", "invoice-export", "solo", "loner"]) await admin("PUT", `/admin/apps/${keys.app.id}/features/${key}`, {});
    await admin("PUT", `${production()}/features/billing/targeting`, { rules: [{ filter: PRO }, { filter: BILLING_ROLLOUT }] });
    for (const key of ["invoices", "legacy-invoices", "invoice-export"]) await admin("PUT", `${production()}/features/${key}/targeting`, { rules: EVERYONE });
    sdk = new ReflagClient({ secretKey: keys.production.secretKey, apiBaseUrl: server.url, offline: false, logger: quietLogger(), batchOptions: { flushOnExit: false }, flagsSyncMode: "polling" });
    await sdk.initialize();
  });
  afterAll(async () => {
    (sdk as { destroy?: () => void } | undefined)?.destroy?.();
    await server?.stop();
  });

  it("stores prerequisites with one flagStateVersion step, a history entry and an audit entry carrying the comment", async () => {
    const before = await flagStateVersion();
    const stream = await openSse(`${server.url}/sse/server`, { authorization: `Bearer ${keys.production.secretKey}` });
    try {
      const reply = await admin("PUT", `${production()}/features/invoices/prerequisites`, { prerequisites: [{ feature: "billing", enabled: true }], comment: "invoices need billing" });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body).toMatchObject({ key: "invoices", prerequisites: [{ feature: "billing", enabled: true }], version: 1, changed: true, flagStateVersion: before + 1 });
      // The live update SDKs refresh on.
      await stream.waitFor((connection) => connection.versions().includes(before + 1));
    } finally {
      stream.close();
    }
    expect(await flagStateVersion()).toBe(before + 1);
    const history = (await admin("GET", `${production()}/features/invoices/history`)).body.versions;
    const entry = history.find((each: { kind: string }) => each.kind === "prerequisites");
    expect(entry).toMatchObject({ version: 1, prerequisites: [{ feature: "billing", enabled: true }], comment: "invoices need billing" });
    const audit = (await admin("GET", "/admin/audit?limit=1")).body.entries[0];
    expect(audit).toMatchObject({ cursor: entry.auditCursor, action: "prerequisites.update", entity: { key: "invoices", environmentId: keys.production.id }, details: { from: [], to: [{ feature: "billing", enabled: true }], comment: "invoices need billing" } });
    // The same list again changes nothing.
    const again = await putPrerequisites("invoices", [{ feature: "billing", enabled: true }]);
    expect(again.body).toMatchObject({ changed: false, version: 1, flagStateVersion: before + 1 });
    expect((await admin("GET", `${production()}/features/invoices`)).body).toMatchObject({ prerequisites: [{ feature: "billing", enabled: true }], targeting: { rules: EVERYONE } });
  });

  it("serves the parent's rules compiled in (its rollout keeping the parent's key) beside an additive prerequisites field", async () => {
    expect((await putPrerequisites("legacy-invoices", [{ feature: "billing", enabled: false }])).status).toBe(200);
    expect((await putPrerequisites("invoice-export", [{ feature: "invoices", enabled: true }])).status).toBe(200);
    const served = (await request(server.url, "GET", "/features", { token: keys.production.secretKey })).body.features as { key: string; prerequisites: unknown; targeting: { rules: unknown[] } }[];
    const byKey = Object.fromEntries(served.map((feature) => [feature.key, feature]));
    const billingAccess = { type: "group", operator: "or", filters: [PRO, BILLING_ROLLOUT] };
    expect(byKey.billing).toMatchObject({ prerequisites: [], targeting: { rules: [{ filter: PRO }, { filter: BILLING_ROLLOUT }] } });
    expect(byKey.invoices).toMatchObject({ prerequisites: [{ feature: "billing", enabled: true }], targeting: { rules: [{ filter: { type: "group", operator: "and", filters: [EVERYONE[0]!.filter, billingAccess] } }] } });
    expect(byKey["legacy-invoices"]!.targeting.rules).toEqual([{ filter: { type: "group", operator: "and", filters: [EVERYONE[0]!.filter, { type: "negation", filter: billingAccess }] } }]);
    // Transitive: invoice-export needs invoices, whose access is its own rule AND billing's.
    const invoicesAccess = { type: "group", operator: "and", filters: [EVERYONE[0]!.filter, billingAccess] };
    expect(byKey["invoice-export"]!.targeting.rules).toEqual([{ filter: { type: "group", operator: "and", filters: [EVERYONE[0]!.filter, invoicesAccess] } }]);
  });

  it("turns a feature on only where its prerequisites say, transitively: server, node SDK and the definition agree", async () => {
    const answers = await everyAnswer(await flagStateVersion());
    let billingByRolloutOnly = 0;
    for (const { context, on } of answers) {
      const pro = "plan" in context.company && context.company.plan === "pro";
      if (on.billing && !pro) billingByRolloutOnly++;
      expect(on.invoices, JSON.stringify(context)).toBe(on.billing);
      expect(on["legacy-invoices"], JSON.stringify(context)).toBe(!on.billing);
      expect(on["invoice-export"], JSON.stringify(context)).toBe(on.invoices);
      if (pro) expect(on.billing).toBe(true);
    }
    // The parent's rollout decided some users and not others: the hashes in the child's copy matched the parent's.
    const notPro = answers.filter(({ context }) => !("plan" in context.company) || context.company.plan !== "pro").length;
    expect(billingByRolloutOnly).toBeGreaterThan(notPro / 5);
    expect(billingByRolloutOnly).toBeLessThan(notPro * 0.7);
  });

  it("follows the parent's kill switch: off, its dependents requiring it are off and those requiring it off are on", async () => {
    expect((await admin("PUT", `${production()}/features/billing/enabled`, { enabled: false })).status).toBe(200);
    for (const { on } of await everyAnswer(await flagStateVersion())) {
      expect(on).toMatchObject({ billing: false, invoices: false, "legacy-invoices": true, "invoice-export": false });
    }
    expect((await admin("PUT", `${production()}/features/billing/enabled`, { enabled: true })).status).toBe(200);
    const back = await evaluated(USERS[1]!);
    expect(back.invoices!.isEnabled).toBe(true);
  });

  it("does not pass a parent's opt-in to its children", async () => {
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/billing`, { optInEnabled: true })).status).toBe(200);
    const freeUser = USERS.find((context) => !("plan" in context.company))!;
    // A user outside billing's 40%, so that only the opt-in turns billing on.
    const userId = Array.from({ length: 50 }, (_, index) => `opted-in-${index}`).find((id) => hashInt(`billing.${id}`) >= BILLING_ROLLOUT.partialRolloutThreshold)!;
    const context = { user: { id: userId }, company: freeUser.company };
    const optIn = await request(server.url, "POST", "/flags/opt-in", { token: keys.production.publishableKey, body: { key: "billing", optedIn: true, scope: "user", context } });
    expect(optIn.status, JSON.stringify(optIn.body)).toBe(200);
    const features = (await request(server.url, "GET", `/features/evaluated?context.user.id=${userId}&context.company.id=${freeUser.company.id}&publishableKey=${keys.production.publishableKey}`)).body.features;
    expect(features.billing.ruleEvaluationResults).toEqual([false, false]);
    expect(features.billing.isEnabled).toBe(true);
    expect(features.invoices.isEnabled).toBe(false);
    expect(features["legacy-invoices"].isEnabled).toBe(true);
  });

  it("refuses an unknown feature, the feature itself, a repeat and a bad body, naming the path, and stores nothing", async () => {
    const before = await flagStateVersion();
    const unknown = await putPrerequisites("solo", [{ feature: "billing", enabled: true }, { feature: "nope", enabled: true }]);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.validationErrors).toEqual([{ path: "prerequisites.1.feature", message: "No feature nope in this app" }]);
    const itself = await putPrerequisites("solo", [{ feature: "solo", enabled: false }]);
    expect(itself.status).toBe(400);
    expect(itself.body.error.validationErrors[0]).toMatchObject({ path: "prerequisites.0.feature", message: expect.stringContaining("own prerequisite") });
    const twice = await putPrerequisites("solo", [{ feature: "billing", enabled: true }, { feature: "billing", enabled: false }]);
    expect(twice.body.error.validationErrors[0].path).toBe("prerequisites.1.feature");
    const badEnabled = await putPrerequisites("solo", [{ feature: "billing", enabled: "yes" }]);
    expect(badEnabled.status).toBe(400);
    expect(badEnabled.body.error.validationErrors[0].path).toBe("prerequisites.0.enabled");
    const notList = await putPrerequisites("solo", { feature: "billing" });
    expect(notList.status).toBe(400);
    expect(notList.body.error.validationErrors[0].path).toBe("prerequisites");
    expect((await putPrerequisites("nope", [])).status).toBe(404);
    expect(await flagStateVersion()).toBe(before);
    expect((await admin("GET", `${production()}/features/solo`)).body.prerequisites).toEqual([]);
  });

  it("refuses a prerequisite that closes a cycle, listing the cycle", async () => {
    const before = await flagStateVersion();
    const cycle = await putPrerequisites("billing", [{ feature: "loner", enabled: true }, { feature: "invoice-export", enabled: false }]);
    expect(cycle.status).toBe(400);
    expect(cycle.body.error.message).toContain("billing → invoice-export → invoices → billing");
    expect(cycle.body.error.validationErrors).toEqual([{ path: "prerequisites.1.feature", message: expect.stringContaining("billing → invoice-export → invoices → billing") }]);
    const short = await putPrerequisites("invoices", [{ feature: "invoice-export", enabled: true }]);
    expect(short.body.error.message).toContain("invoices → invoice-export → invoices");
    expect(await flagStateVersion()).toBe(before);
  });

  it("refuses to archive a feature others depend on, in any environment, naming them", async () => {
    const billing = await admin("DELETE", `/admin/apps/${keys.app.id}/features/billing`);
    expect(billing.status).toBe(409);
    expect(billing.body.error.code).toBe("CONFLICT");
    expect(billing.body.error.message).toContain("invoices (production)");
    expect(billing.body.error.message).toContain("legacy-invoices (production)");
    // Prerequisites are per environment: a dependency in development alone holds the archive too.
    expect((await putPrerequisites("loner", [{ feature: "solo", enabled: true }], development())).status).toBe(200);
    expect((await admin("GET", `${production()}/features/loner`)).body.prerequisites).toEqual([]);
    const solo = await admin("DELETE", `/admin/apps/${keys.app.id}/features/solo`);
    expect(solo.status).toBe(409);
    expect(solo.body.error.message).toContain("loner (development)");
    expect((await admin("GET", `/admin/apps/${keys.app.id}/features`)).body.features.map((feature: { key: string }) => feature.key)).toContain("solo");
    // Once nobody depends on it, it goes.
    expect((await putPrerequisites("loner", [], development())).status).toBe(200);
    expect((await admin("DELETE", `/admin/apps/${keys.app.id}/features/solo`)).status).toBe(200);
  });

  it("holds prerequisite writes where the policy requires approval, as targeting writes; viewers cannot write them", async () => {
    await createMember(server.url, server.adminToken, "editor@example.com", "editor");
    await createMember(server.url, server.adminToken, "viewer@example.com", "viewer");
    const editor = await signIn(server.url, "editor@example.com");
    const viewer = await signIn(server.url, "viewer@example.com");
    const path = `${production()}/features/loner/prerequisites`;
    expect((await asSession(server.url, viewer, "PUT", path, { prerequisites: [] })).status).toBe(403);
    expect((await admin("PUT", `${production()}/policy`, { requireApproval: true })).status).toBe(200);
    try {
      const held = await asSession(server.url, editor, "PUT", path, { prerequisites: [{ feature: "billing", enabled: true }] });
      expect(held.status).toBe(409);
      expect(held.body.error.code).toBe("APPROVAL_REQUIRED");
      expect((await admin("PUT", path, { prerequisites: [{ feature: "billing", enabled: true }] })).body.error.code).toBe("APPROVAL_REQUIRED");
      const bypassed = await admin("PUT", `${path}?bypass=true&reason=release+night`, { prerequisites: [{ feature: "billing", enabled: true }] });
      expect(bypassed.status, JSON.stringify(bypassed.body)).toBe(200);
      expect((await admin("GET", "/admin/audit?limit=1")).body.entries[0]).toMatchObject({ action: "prerequisites.update", details: { bypass: true, reason: "release night" } });
    } finally {
      await admin("PUT", `${production()}/policy`, { requireApproval: false });
    }
  });
});
