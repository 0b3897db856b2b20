/**
 * Change requests that carry the kill switch and prerequisites (API.md §15, additive to `changes`) over real HTTP,
 * where approval is required: an editor, who may not turn a feature back on or write prerequisites directly, proposes
 * it; validation at `changes.N.…` (cycles named, across the request's own changes too); the diff and base versions;
 * apply all or nothing with one flagStateVersion step; and a compare-and-swap on the switch's and the prerequisites'
 * versions as on targeting and config.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, signIn, type Session } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const PRO = [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }];

describe(`change requests with the kill switch and prerequisites (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  let alice: Session;
  let bob: Session;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const production = () => `/admin/environments/${keys.production.id}`;
  const requests = () => `${production()}/change-requests`;
  const as = (session: Session, method: string, path: string, body?: unknown) => asSession(server.url, session, method, path, body);
  const features = async () => (await admin("GET", `${production()}/features`)).body;
  const featureOf = async (key: string) => (await features()).features.find((feature: { key: string }) => feature.key === key);
  const served = async (key: string) => (await request(server.url, "GET", "/features", { token: keys.production.secretKey })).body.features.find((feature: { key: string }) => feature.key === key);
  const bypass = (path: string, body: Record<string, unknown>) => admin("PUT", `${path}?bypass=true`, { ...body, reason: "test setup" });
  /** Proposed by alice, approved by bob: ready to apply. */
  const approved = async (body: Record<string, unknown>) => {
    const created = await as(alice, "POST", requests(), body);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.changeRequest.id as string;
    expect((await as(bob, "POST", `${requests()}/${id}/reviews`, { decision: "approve" })).body.changeRequest.state).toBe("approved");
    return id;
  };

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken);
    for (const key of ["huddle", "calls", "invoices", "billing", "alpha", "beta"]) await admin("PUT", `/admin/apps/${keys.app.id}/features/${key}`, {});
    for (const key of ["huddle", "calls", "invoices", "billing"]) await admin("PUT", `${production()}/features/${key}/targeting`, { rules: EVERYONE });
    // billing already depends on invoices: a request making invoices depend on billing closes a cycle.
    await admin("PUT", `${production()}/features/billing/prerequisites`, { prerequisites: [{ feature: "invoices", enabled: true }] });
    for (const [email, role] of [["alice@example.com", "editor"], ["bob@example.com", "editor"]] as const) await createMember(server.url, server.adminToken, email, role);
    [alice, bob] = await Promise.all(["alice", "bob"].map((name) => signIn(server.url, `${name}@example.com`)));
    expect((await admin("PUT", `${production()}/policy`, { requireApproval: true, minApprovals: 1 })).status).toBe(200);
    // Turning off is never held: the editor switches huddle off in an emergency.
    expect((await as(alice, "PUT", `${production()}/features/huddle/enabled`, { enabled: false })).body).toMatchObject({ enabled: false, changed: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("holds the editor's direct writes: turning back on and prerequisites are for a request", async () => {
    expect((await as(alice, "PUT", `${production()}/features/huddle/enabled`, { enabled: true })).body.error.code).toBe("APPROVAL_REQUIRED");
    expect((await as(alice, "PUT", `${production()}/features/calls/prerequisites`, { prerequisites: [{ feature: "huddle", enabled: true }] })).body.error.code).toBe("APPROVAL_REQUIRED");
  });

  it("validates enabled and prerequisites as their direct writes, at changes.N.…, cycles named, and stores nothing", async () => {
    const before = (await admin("GET", requests())).body.changeRequests.length;
    const shapes = await as(alice, "POST", requests(), {
      title: "Bad shapes",
      changes: [
        { feature: "huddle", enabled: "yes" },
        { feature: "calls", prerequisites: [{ feature: "huddle" }] },
      ],
    });
    expect(shapes.status).toBe(400);
    const shapePaths = shapes.body.error.validationErrors.map((issue: { path: string }) => issue.path);
    expect(shapePaths).toEqual(expect.arrayContaining(["changes.0.enabled", "changes.1.prerequisites.0.enabled"]));

    const refs = await as(alice, "POST", requests(), {
      title: "Bad references",
      changes: [
        { feature: "calls", prerequisites: [{ feature: "ghost", enabled: true }] },
        { feature: "huddle", prerequisites: [{ feature: "huddle", enabled: true }] },
      ],
    });
    expect(refs.status).toBe(400);
    expect(refs.body.error.validationErrors).toEqual([
      { path: "changes.0.prerequisites.0.feature", message: "No feature ghost in this app" },
      { path: "changes.1.prerequisites.0.feature", message: "huddle cannot be its own prerequisite" },
    ]);

    // A cycle through what is stored (billing → invoices), and one the request's own two changes would close.
    const stored = await as(alice, "POST", requests(), { title: "Cycle", changes: [{ feature: "invoices", prerequisites: [{ feature: "billing", enabled: true }] }] });
    expect(stored.status).toBe(400);
    expect(stored.body.error.validationErrors).toEqual([{ path: "changes.0.prerequisites.0.feature", message: "These prerequisites would close a cycle: invoices → billing → invoices" }]);
    const together = await as(alice, "POST", requests(), {
      title: "Cycle together",
      changes: [
        { feature: "calls", prerequisites: [{ feature: "huddle", enabled: true }] },
        { feature: "huddle", prerequisites: [{ feature: "calls", enabled: false }] },
      ],
    });
    expect(together.status).toBe(400);
    expect(together.body.error.validationErrors).toEqual([{ path: "changes.1.prerequisites.0.feature", message: "These prerequisites would close a cycle: huddle → calls → huddle" }]);
    expect((await admin("GET", requests())).body.changeRequests).toHaveLength(before);
  });

  it("lets an editor propose turning a feature back on with prerequisites: diff, base versions, one apply, one flagStateVersion step", async () => {
    const huddle = await featureOf("huddle");
    expect(huddle.enabled).toBe(false);
    const created = await as(alice, "POST", requests(), {
      title: "Huddle back on, calls behind it",
      changes: [
        { feature: "huddle", enabled: true, targeting: { rules: PRO } },
        { feature: "calls", prerequisites: [{ feature: "huddle", enabled: true }] },
      ],
    });
    expect(created.status).toBe(200);
    const [huddleChange, callsChange] = created.body.changeRequest.changes;
    expect(huddleChange).toMatchObject({
      feature: "huddle",
      enabled: true,
      base: { targetingVersion: 1, configVersion: 0, enabledVersion: 1, prerequisitesVersion: 0 },
      diff: { enabled: { from: false, to: true, changed: true }, targeting: { changed: true }, current: { enabledVersion: 1 } },
    });
    expect(callsChange).toMatchObject({
      feature: "calls",
      prerequisites: [{ feature: "huddle", enabled: true }],
      base: { prerequisitesVersion: 0 },
      diff: { prerequisites: { from: [], to: [{ feature: "huddle", enabled: true }], rules: [{ index: 0, change: "added" }], changed: true } },
    });
    const id = created.body.changeRequest.id as string;
    expect((await as(bob, "POST", `${requests()}/${id}/reviews`, { decision: "approve" })).body.changeRequest.state).toBe("approved");

    const flagStateVersion = (await features()).flagStateVersion as number;
    const applied = await as(alice, "POST", `${requests()}/${id}/apply`, {});
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expect(applied.body).toMatchObject({ changeRequest: { state: "applied" }, flagStateVersion: flagStateVersion + 1 });
    expect((await features()).flagStateVersion).toBe(flagStateVersion + 1);

    // What SDKs read: huddle on again with its new rules, calls gated on it.
    expect(await served("huddle")).toMatchObject({ enabled: true, targeting: { rules: PRO } });
    expect((await served("calls")).prerequisites).toEqual([{ feature: "huddle", enabled: true }]);
    const evaluated = async (plan: string) =>
      (await request(server.url, "GET", `/features/evaluated?context.company.id=c1&context.company.plan=${plan}&publishableKey=${keys.production.publishableKey}`)).body.features;
    expect((await evaluated("pro")).calls?.isEnabled).toBe(true);
    expect((await evaluated("free")).calls?.isEnabled ?? false).toBe(false);

    // History: each kind's entry names the request; the audit log has one entry for the whole apply.
    const history = async (key: string) => (await admin("GET", `${production()}/features/${key}/history`)).body.versions as { kind: string; changeRequestId?: string }[];
    expect((await history("huddle")).filter((entry) => entry.changeRequestId === id).map((entry) => entry.kind).sort()).toEqual(["enabled", "targeting"]);
    expect((await history("calls")).filter((entry) => entry.changeRequestId === id).map((entry) => entry.kind)).toEqual(["prerequisites"]);
    const audit = (await admin("GET", "/admin/audit?limit=200")).body.entries as { action: string; entity: { id: string; key?: string }; details: { features: unknown[] } }[];
    const entries = audit.filter((entry) => entry.entity.id === id && entry.action === "change-request.apply");
    expect(entries).toHaveLength(1);
    expect(entries[0]!.details.features).toEqual([
      expect.objectContaining({ feature: "huddle", enabled: { from: false, to: true }, enabledVersion: 2 }),
      expect.objectContaining({ feature: "calls", prerequisites: { from: [], to: [{ feature: "huddle", enabled: true }] }, prerequisitesVersion: 1 }),
    ]);
    const directEntries = audit.filter((entry) => ["huddle", "calls"].includes(entry.entity.key ?? "") && /^(feature\.(en|dis)able|prerequisites\.update)$/.test(entry.action));
    expect(directEntries.map((entry) => entry.action)).toEqual(["feature.disable"]);
  });

  it("refuses an apply whose kill switch moved since it was based on it, and writes nothing of it", async () => {
    const id = await approved({ title: "Invoices off, billing new rules", changes: [{ feature: "invoices", enabled: false }, { feature: "billing", targeting: { rules: PRO } }] });
    // Another editor switches invoices off and a request brings it back: the switch's version moved twice.
    expect((await as(bob, "PUT", `${production()}/features/invoices/enabled`, { enabled: false })).body.changed).toBe(true);
    expect((await bypass(`${production()}/features/invoices/enabled`, { enabled: true })).body.changed).toBe(true);
    const billingBefore = (await featureOf("billing")).targeting.version;
    const flagStateVersion = (await features()).flagStateVersion;
    const conflict = await as(alice, "POST", `${requests()}/${id}/apply`, {});
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe("CONFLICT");
    expect(conflict.body.error.message).toContain("invoices (kill switch now version 2, based on 0)");
    expect((await featureOf("billing")).targeting.version).toBe(billingBefore);
    expect((await features()).flagStateVersion).toBe(flagStateVersion);
    expect((await admin("GET", `${requests()}/${id}`)).body.changeRequest.state).toBe("approved");
  });

  it("refuses an apply whose prerequisites moved, or whose list now closes a cycle through another feature's", async () => {
    const moved = await approved({ title: "Invoices behind calls", changes: [{ feature: "invoices", prerequisites: [{ feature: "calls", enabled: true }] }] });
    expect((await bypass(`${production()}/features/invoices/prerequisites`, { prerequisites: [{ feature: "huddle", enabled: false }] })).body.changed).toBe(true);
    const conflict = await as(alice, "POST", `${requests()}/${moved}/apply`, {});
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.message).toContain("invoices (prerequisites now version 1, based on 0)");
    expect((await featureOf("invoices")).prerequisites).toEqual([{ feature: "huddle", enabled: false }]);

    // alpha's own list stays as the request was based on it, but beta came to depend on alpha meanwhile: the
    // request's alpha → beta would now close a cycle, and nothing is written.
    const cyclic = await approved({ title: "Alpha behind beta", changes: [{ feature: "alpha", prerequisites: [{ feature: "beta", enabled: true }] }] });
    expect((await bypass(`${production()}/features/beta/prerequisites`, { prerequisites: [{ feature: "alpha", enabled: true }] })).body.changed).toBe(true);
    const refused = await as(alice, "POST", `${requests()}/${cyclic}/apply`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain("These prerequisites would close a cycle: alpha → beta → alpha");
    expect((await featureOf("alpha")).prerequisites).toEqual([]);
  });
});
