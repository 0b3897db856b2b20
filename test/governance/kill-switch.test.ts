/**
 * The kill switch and change comments (API.md §15) over real HTTP: a feature switched off is off for every context in
 * that environment — the server's answers, `GET /features` (rules: [], enabled: false) and the official node SDK's
 * local evaluation agree — its rules are kept and come back when it is switched on, and every switch steps
 * flagStateVersion once, announces it, and leaves a history entry and an audit entry carrying the comment.
 */
import { ReflagClient } from "@reflag/node-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, signIn } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { openSse } from "../support/sse.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";
import { quietLogger } from "../sdk/fixtures.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const PRO = [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }];

describe(`kill switch and change comments (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  let sdk: ReflagClient;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const production = () => `/admin/environments/${keys.production.id}`;
  const flagStateVersion = async () => (await admin("GET", `${production()}/features`)).body.flagStateVersion as number;
  const evaluated = async (query: string) => (await request(server.url, "GET", `/features/evaluated?${query}&publishableKey=${keys.production.publishableKey}`)).body.features;
  const enabledKeys = async (query: string) => Object.keys((await request(server.url, "GET", `/features/enabled?${query}&publishableKey=${keys.production.publishableKey}`)).body.features);
  const served = async () => (await request(server.url, "GET", "/features", { token: keys.production.secretKey })).body;

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken);
    await admin("PUT", `/admin/apps/${keys.app.id}/features/checkout`, { name: "Checkout" });
    await admin("PUT", `/admin/apps/${keys.app.id}/features/export`, {});
    await admin("PUT", `${production()}/features/checkout/targeting`, { rules: EVERYONE, comment: "on for everyone" });
    await admin("PUT", `${production()}/features/export/targeting`, { rules: PRO });
    sdk = new ReflagClient({ secretKey: keys.production.secretKey, apiBaseUrl: server.url, offline: false, logger: quietLogger(), batchOptions: { flushOnExit: false }, flagsSyncMode: "polling" });
    await sdk.initialize();
  });
  afterAll(async () => {
    (sdk as { destroy?: () => void } | undefined)?.destroy?.();
    await server?.stop();
  });

  it("carries a write's comment into its history entry and audit entry", async () => {
    const history = (await admin("GET", `${production()}/features/checkout/history`)).body.versions;
    expect(history.at(-1)).toMatchObject({ kind: "targeting", version: 1, comment: "on for everyone" });
    const audit = (await admin("GET", "/admin/audit?limit=1000")).body.entries;
    const entry = audit.find((each: { cursor: string }) => each.cursor === history.at(-1).auditCursor);
    expect(entry).toMatchObject({ action: "targeting.update", details: { comment: "on for everyone" } });
  });

  it("takes a comment on config and stage writes too, query or body", async () => {
    expect((await admin("PUT", `${production()}/features/export/config?comment=blue%20for%20all`, { variants: [] })).status).toBe(200);
    expect((await admin("GET", `${production()}/features/export/history`)).body.versions.find((entry: { kind: string }) => entry.kind === "config")).toMatchObject({ version: 1, comment: "blue for all" });
    const staged = await admin("PUT", `/admin/apps/${keys.app.id}/features/export/stage`, { stage: "Internal", comment: "dogfood first" });
    expect(staged.status, JSON.stringify(staged.body)).toBe(200);
    expect((await admin("GET", `/admin/environments/${keys.development.id}/features/export/history`)).body.versions.at(-1)).toMatchObject({ kind: "targeting", comment: "dogfood first" });
    expect((await admin("GET", "/admin/audit?limit=1")).body.entries[0]).toMatchObject({ action: "feature.stage", details: { comment: "dogfood first" } });
    // Back to its rules in production for what follows.
    await admin("PUT", `${production()}/features/export/targeting`, { rules: PRO });
  });

  it("refuses a comment over 500 characters or of the wrong type, naming it, and writes nothing", async () => {
    const before = await flagStateVersion();
    const long = await admin("PUT", `${production()}/features/checkout/targeting`, { rules: PRO, comment: "x".repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body.error.validationErrors.map((issue: { path: string }) => issue.path)).toEqual(["comment"]);
    const wrongType = await admin("PUT", `${production()}/features/checkout/enabled`, { enabled: false, comment: 7 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.validationErrors[0].path).toBe("comment");
    const illFormed = await request(server.url, "PUT", `${production()}/features/checkout/enabled`, { token: server.adminToken, rawBody: '{"enabled":false,"comment":"cut \\ud83d"}', contentType: "application/json" });
    expect(illFormed.status).toBe(400);
    expect(illFormed.body.error.validationErrors[0].path).toBe("comment");
    expect(await flagStateVersion()).toBe(before);
  });

  it("refuses a switch body without a boolean `enabled`, and a viewer", async () => {
    const bad = await admin("PUT", `${production()}/features/checkout/enabled`, { enabled: "no" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.validationErrors[0].path).toBe("enabled");
    expect((await admin("PUT", `${production()}/features/nope/enabled`, { enabled: false })).status).toBe(404);
    await createMember(server.url, server.adminToken, "viewer@example.com", "viewer");
    const viewer = await signIn(server.url, "viewer@example.com");
    expect((await asSession(server.url, viewer, "PUT", `${production()}/features/checkout/enabled`, { enabled: false })).status).toBe(403);
  });

  it("switches a feature off for everyone: server, served rules and the node SDK's local evaluation agree", async () => {
    expect(sdk.getFlag({ user: { id: "u1" }, company: { id: "c1" }, enableTracking: false }, "checkout").isEnabled).toBe(true);
    const before = await flagStateVersion();
    const stream = await openSse(`${server.url}/sse/server`, { authorization: `Bearer ${keys.production.secretKey}` });
    try {
      const reply = await admin("PUT", `${production()}/features/checkout/enabled`, { enabled: false, comment: "incident 12: checkout errors" });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body).toMatchObject({ key: "checkout", enabled: false, changed: true, flagStateVersion: before + 1 });
      await stream.waitFor((connection) => connection.versions().includes(before + 1));
    } finally {
      stream.close();
    }
    expect(await flagStateVersion()).toBe(before + 1);

    const rules = await served();
    const checkout = rules.features.find((feature: { key: string }) => feature.key === "checkout");
    expect(checkout).toMatchObject({ enabled: false, targeting: { version: 1, rules: [] } });
    expect(rules.features.find((feature: { key: string }) => feature.key === "export")).toMatchObject({ enabled: true, targeting: { rules: PRO } });

    for (const query of ["context.user.id=u1", "context.company.id=c9&context.company.plan=pro"]) {
      expect((await evaluated(query)).checkout).toMatchObject({ isEnabled: false, targetingVersion: 1 });
      expect(await enabledKeys(query)).not.toContain("checkout");
    }
    expect(await enabledKeys("context.company.id=c9&context.company.plan=pro")).toContain("export");

    await sdk.refreshFlags(before + 1);
    for (const context of [{ user: { id: "u1" } }, { company: { id: "c9", plan: "pro" } }]) {
      expect(sdk.getFlag({ ...context, enableTracking: false }, "checkout").isEnabled).toBe(false);
    }
    expect(sdk.getFlag({ company: { id: "c9", plan: "pro" }, enableTracking: false }, "export").isEnabled).toBe(true);

    // The rules are kept: the management API still shows them, with the switch beside them.
    const shown = (await admin("GET", `${production()}/features`)).body.features.find((feature: { key: string }) => feature.key === "checkout");
    expect(shown).toMatchObject({ enabled: false, targeting: { version: 1, rules: EVERYONE } });
    expect((await admin("GET", `${production()}/features/checkout`)).body).toMatchObject({ enabled: false, targeting: { version: 1, rules: EVERYONE } });
    // The development environment is untouched.
    expect((await request(server.url, "GET", "/features", { token: keys.development.secretKey })).body.features.find((feature: { key: string }) => feature.key === "checkout").enabled).toBe(true);
  });

  it("keeps an opted-in user out too: opting in does not beat the switch", async () => {
    await admin("PUT", `/admin/apps/${keys.app.id}/features/labs`, { optInEnabled: true });
    const optIn = await request(server.url, "POST", "/flags/opt-in", { token: keys.production.publishableKey, body: { key: "labs", optedIn: true, scope: "user", context: { user: { id: "keen" } } } });
    expect(optIn.status, JSON.stringify(optIn.body)).toBe(200);
    expect((await evaluated("context.user.id=keen")).labs.isEnabled).toBe(true);
    expect((await admin("PUT", `${production()}/features/labs/enabled`, { enabled: false })).status).toBe(200);
    expect((await evaluated("context.user.id=keen")).labs.isEnabled).toBe(false);
    expect(await enabledKeys("context.user.id=keen")).not.toContain("labs");
    expect((await admin("PUT", `${production()}/features/labs/enabled`, { enabled: true })).status).toBe(200);
    expect((await evaluated("context.user.id=keen")).labs.isEnabled).toBe(true);
  });

  it("records each switch in the history (kind enabled) and the audit log, with the comment", async () => {
    const history = (await admin("GET", `${production()}/features/checkout/history`)).body.versions;
    const switched = history.filter((entry: { kind: string }) => entry.kind === "enabled");
    expect(switched).toEqual([expect.objectContaining({ kind: "enabled", version: 1, enabled: false, comment: "incident 12: checkout errors", actor: { kind: "admin", id: "admin" } })]);
    const audit = (await admin("GET", "/admin/audit?limit=1000")).body.entries;
    const entry = audit.find((each: { cursor: string }) => each.cursor === switched[0].auditCursor);
    expect(entry).toMatchObject({
      action: "feature.disable",
      entity: { kind: "feature", key: "checkout", environmentId: keys.production.id },
      details: { enabled: { from: true, to: false }, comment: "incident 12: checkout errors" },
    });
  });

  it("changes nothing when the switch is already where asked", async () => {
    const before = await flagStateVersion();
    const reply = await admin("PUT", `${production()}/features/checkout/enabled`, { enabled: false });
    expect(reply.body).toMatchObject({ enabled: false, changed: false, flagStateVersion: before });
    expect(await flagStateVersion()).toBe(before);
  });

  it("keeps rules edited while off, and serves them when switched back on", async () => {
    expect((await admin("PUT", `${production()}/features/checkout/targeting`, { rules: PRO })).status).toBe(200);
    expect((await evaluated("context.company.id=c9&context.company.plan=pro")).checkout.isEnabled).toBe(false);
    const before = await flagStateVersion();
    const reply = await admin("PUT", `${production()}/features/checkout/enabled`, { enabled: true, comment: "fixed" });
    expect(reply.body).toMatchObject({ enabled: true, changed: true, flagStateVersion: before + 1 });
    const checkout = (await served()).features.find((feature: { key: string }) => feature.key === "checkout");
    expect(checkout).toMatchObject({ enabled: true, targeting: { version: 2, rules: PRO } });
    expect((await evaluated("context.company.id=c9&context.company.plan=pro")).checkout.isEnabled).toBe(true);
    expect((await evaluated("context.company.id=c8&context.company.plan=free")).checkout.isEnabled).toBe(false);
    await sdk.refreshFlags(before + 1);
    expect(sdk.getFlag({ company: { id: "c9", plan: "pro" }, enableTracking: false }, "checkout").isEnabled).toBe(true);
    expect(sdk.getFlag({ company: { id: "c8", plan: "free" }, enableTracking: false }, "checkout").isEnabled).toBe(false);
    const audit = (await admin("GET", "/admin/audit?limit=1")).body.entries;
    expect(audit[0]).toMatchObject({ action: "feature.enable", details: { comment: "fixed" } });
  });
});
