/**
 * Change requests (API.md §15) over real HTTP with two members — one proposes, the other approves — an owner, and a
 * viewer: validation at `changes.N.…`, the diff against the current rules, reviews (never the author's, never a
 * viewer's, one per member and revision, none on a stale revision), edits that void approvals, cancel, and an apply
 * that is one compare-and-swap: a conflict names the features and writes nothing; success writes one version per
 * change, steps flagStateVersion once, and its history entries name the request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, signIn, type Session } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { openSse } from "../support/sse.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const PRO = [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }];
const BLUE = [{ filter: { type: "constant", value: true }, key: "blue", payload: { color: "#00f" } }];

describe(`change requests (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  let alice: Session;
  let bob: Session;
  let owner: Session;
  let viewer: Session;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const requests = () => `/admin/environments/${keys.production.id}/change-requests`;
  const as = (session: Session, method: string, path: string, body?: unknown) => asSession(server.url, session, method, path, body);
  const versions = async () => {
    const reply = await admin("GET", `/admin/environments/${keys.production.id}/features`);
    const of = (key: string) => reply.body.features.find((feature: { key: string }) => feature.key === key);
    return { flagStateVersion: reply.body.flagStateVersion as number, huddle: of("huddle").targeting.version as number, calls: of("calls").config.version as number };
  };

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken);
    for (const key of ["huddle", "calls"]) await admin("PUT", `/admin/apps/${keys.app.id}/features/${key}`, {});
    await admin("PUT", `/admin/environments/${keys.production.id}/features/huddle/targeting`, { rules: PRO });
    for (const [email, role] of [["alice@example.com", "editor"], ["bob@example.com", "editor"], ["olga@example.com", "owner"], ["vic@example.com", "viewer"]] as const) {
      await createMember(server.url, server.adminToken, email, role);
    }
    [alice, bob, owner, viewer] = await Promise.all(["alice", "bob", "olga", "vic"].map((name) => signIn(server.url, `${name}@example.com`)));
    expect((await admin("PUT", `/admin/environments/${keys.production.id}/policy`, { requireApproval: true, minApprovals: 1 })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("validates every change as its direct write would be, naming changes.N.…, and stores nothing", async () => {
    const reply = await as(alice, "POST", requests(), {
      title: "Bad",
      changes: [
        { feature: "huddle", targeting: { rules: [{ filter: { type: "context", field: "company.plan", operator: "NOPE", values: [] } }] } },
        { feature: "ghost", config: { variants: [] } },
        { feature: "calls" },
      ],
    });
    expect(reply.status).toBe(400);
    const paths = reply.body.error.validationErrors.map((issue: { path: string }) => issue.path);
    expect(paths).toContain("changes.2");
    expect((await as(alice, "POST", requests(), { title: "", changes: [] })).body.error.validationErrors.map((issue: { path: string }) => issue.path).sort()).toEqual(["changes", "title"]);
    const rules = await as(alice, "POST", requests(), { title: "Bad rules", changes: [{ feature: "huddle", targeting: { rules: [{ filter: { type: "context", field: "company.plan", operator: "NOPE", values: [] } }] } }, { feature: "ghost", config: { variants: [] } }] });
    expect(rules.status).toBe(400);
    const rulePaths = rules.body.error.validationErrors.map((issue: { path: string }) => issue.path);
    expect(rulePaths.some((path: string) => path.startsWith("changes.0.targeting.rules.0"))).toBe(true);
    expect(rulePaths).toContain("changes.1.feature");
    const past = await as(alice, "POST", requests(), { title: "Past", changes: [{ feature: "calls", config: { variants: [] } }], scheduledAt: "2001-01-01T00:00:00Z" });
    expect(past.body.error.validationErrors[0].path).toBe("scheduledAt");
    expect((await admin("GET", requests())).body.changeRequests).toEqual([]);
  });

  let id: string;

  it("creates a request with its base versions and a diff against the current rules", async () => {
    const reply = await as(alice, "POST", requests(), {
      title: "Launch huddles to everyone",
      description: "Pro went well",
      comment: "see the launch doc",
      changes: [
        { feature: "huddle", targeting: { rules: [...PRO, ...EVERYONE] } },
        { feature: "calls", config: { variants: BLUE } },
      ],
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const request = reply.body.changeRequest;
    id = request.id;
    expect(request).toMatchObject({ environmentId: keys.production.id, title: "Launch huddles to everyone", state: "open", revision: 1, approvals: [], scheduledAt: null, createdBy: { kind: "member", email: "alice@example.com" } });
    expect(request.changes[0]).toMatchObject({
      feature: "huddle",
      base: { targetingVersion: 1, configVersion: 0 },
      diff: { targeting: { from: PRO, to: [...PRO, ...EVERYONE], rules: [{ index: 0, change: "unchanged" }, { index: 1, change: "added" }], changed: true } },
    });
    expect(request.changes[1]).toMatchObject({ feature: "calls", base: { targetingVersion: 0, configVersion: 0 }, diff: { config: { from: [], to: BLUE, rules: [{ index: 0, change: "added" }] } } });
    expect((await as(viewer, "GET", `${requests()}/${id}`)).body.changeRequest.id).toBe(id);
    expect((await as(viewer, "GET", `${requests()}?state=open`)).body.changeRequests.map((each: { id: string }) => each.id)).toEqual([id]);
    expect((await as(viewer, "POST", requests(), { title: "x", changes: [{ feature: "calls", config: { variants: [] } }] })).status).toBe(403);
  });

  it("refuses to apply before approval, the author's own review, a viewer's review", async () => {
    const early = await as(alice, "POST", `${requests()}/${id}/apply`);
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe("CONFLICT");
    const own = await as(alice, "POST", `${requests()}/${id}/reviews`, { decision: "approve" });
    expect(own.status).toBe(403);
    expect(own.body.error.code).toBe("FORBIDDEN");
    expect((await as(viewer, "POST", `${requests()}/${id}/reviews`, { decision: "approve" })).status).toBe(403);
    const bad = await as(bob, "POST", `${requests()}/${id}/reviews`, { decision: "maybe" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.validationErrors[0].path).toBe("decision");
  });

  it("approves on one member's review; a second review by them on that revision is refused", async () => {
    const reply = await as(bob, "POST", `${requests()}/${id}/reviews`, { decision: "approve", comment: "looks right", revision: 1 });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.changeRequest).toMatchObject({ state: "approved", approvals: [{ actor: { email: "bob@example.com" }, decision: "approve", comment: "looks right", revision: 1 }] });
    expect((await as(bob, "POST", `${requests()}/${id}/reviews`, { decision: "approve" })).status).toBe(409);
  });

  it("voids every approval on an edit: the revision steps, the request is open again, a review of the old revision is stale", async () => {
    const edited = await as(alice, "PUT", `${requests()}/${id}`, { title: "Launch huddles and blue calls" });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.changeRequest).toMatchObject({ state: "open", revision: 2, approvals: [], title: "Launch huddles and blue calls" });
    expect((await as(bob, "PUT", `${requests()}/${id}`, { title: "not mine" })).status).toBe(403);
    const stale = await as(bob, "POST", `${requests()}/${id}/reviews`, { decision: "approve", revision: 1 });
    expect(stale.status).toBe(409);
    expect(stale.body.error.message).toContain("revision 2");
    const again = await as(bob, "POST", `${requests()}/${id}/reviews`, { decision: "approve", revision: 2 });
    expect(again.body.changeRequest).toMatchObject({ state: "approved", revision: 2 });
  });

  it("applies all at once: one version per change, one flagStateVersion step, one flags-updated, history naming the request", async () => {
    const before = await versions();
    const stream = await openSse(`${server.url}/sse/server`, { authorization: `Bearer ${keys.production.secretKey}` });
    let applied;
    try {
      applied = await as(bob, "POST", `${requests()}/${id}/apply`, { comment: "shipping" });
      expect(applied.status, JSON.stringify(applied.body)).toBe(200);
      await stream.waitFor((connection) => connection.versions().includes(before.flagStateVersion + 1));
      // A later write: once its announcement arrives, any other for the request would have arrived before it.
      await admin("PUT", `/admin/environments/${keys.production.id}/features/calls/targeting?bypass=true&reason=probe`, { rules: [] });
      await stream.waitFor((connection) => connection.versions().includes(before.flagStateVersion + 2));
      expect(stream.versions().filter((version) => version > before.flagStateVersion)).toEqual([before.flagStateVersion + 1, before.flagStateVersion + 2]);
    } finally {
      stream.close();
    }
    expect(applied.body).toMatchObject({ changeRequest: { state: "applied" }, flagStateVersion: before.flagStateVersion + 1 });
    const after = await versions();
    expect(after).toEqual({ flagStateVersion: before.flagStateVersion + 2, huddle: before.huddle + 1, calls: before.calls + 1 });
    const huddle = (await admin("GET", `/admin/environments/${keys.production.id}/features/huddle/history`)).body.versions;
    expect(huddle.at(-1)).toMatchObject({ kind: "targeting", version: 2, rules: [...PRO, ...EVERYONE], changeRequestId: id, actor: { email: "bob@example.com" }, comment: "shipping" });
    const calls = (await admin("GET", `/admin/environments/${keys.production.id}/features/calls/history`)).body.versions.filter((entry: { kind: string }) => entry.kind === "config");
    expect(calls.at(-1)).toMatchObject({ version: 1, variants: BLUE, changeRequestId: id });
    const evaluated = (await request(server.url, "GET", `/features/evaluated?context.company.id=c1&publishableKey=${keys.production.publishableKey}`)).body.features;
    expect(evaluated.huddle.isEnabled).toBe(true);
    expect(evaluated.calls.config.key).toBe("blue");
    const audit = (await admin("GET", "/admin/audit?limit=1000")).body.entries.find((entry: { action: string }) => entry.action === "change-request.apply");
    expect(audit).toMatchObject({ entity: { kind: "change-request", id }, details: { comment: "shipping", features: [{ feature: "huddle", targetingVersion: 2 }, { feature: "calls", configVersion: 1 }] } });
    expect((await as(alice, "PUT", `${requests()}/${id}`, { title: "again" })).status).toBe(409);
    expect((await as(bob, "POST", `${requests()}/${id}/apply`)).status).toBe(409);
  });

  it("refuses an apply whose base moved: 409 naming the feature and its versions, nothing written", async () => {
    const created = await as(alice, "POST", requests(), { title: "Only pro again", changes: [{ feature: "huddle", targeting: { rules: PRO } }, { feature: "calls", config: { variants: [] } }] });
    const conflictId = created.body.changeRequest.id;
    await as(bob, "POST", `${requests()}/${conflictId}/reviews`, { decision: "approve" });
    // Someone writes huddle directly meanwhile (an owner's bypass).
    expect((await as(owner, "PUT", `/admin/environments/${keys.production.id}/features/huddle/targeting`, { rules: EVERYONE, bypass: true, reason: "incident" })).status).toBe(200);
    const before = await versions();
    const reply = await as(bob, "POST", `${requests()}/${conflictId}/apply`);
    expect(reply.status).toBe(409);
    expect(reply.body.error.code).toBe("CONFLICT");
    expect(reply.body.error.message).toContain("huddle (now targeting version 3, config version 0; based on 2 and 0)");
    expect(reply.body.error.message).not.toContain("calls (");
    expect(await versions()).toEqual(before);
    const read = (await admin("GET", `${requests()}/${conflictId}`)).body.changeRequest;
    expect(read.state).toBe("approved");
    expect(read.changes[0].diff.current).toEqual({ targetingVersion: 3, configVersion: 0, enabledVersion: 0, prerequisitesVersion: 0 });
    // The author edits it onto the new base; approvals are void; approved again, it applies.
    const rebased = await as(alice, "PUT", `${requests()}/${conflictId}`, { changes: [{ feature: "huddle", targeting: { rules: PRO } }] });
    expect(rebased.body.changeRequest).toMatchObject({ state: "open", revision: 2, changes: [{ feature: "huddle", base: { targetingVersion: 3 } }] });
    await as(bob, "POST", `${requests()}/${conflictId}/reviews`, { decision: "approve", revision: 2 });
    expect((await as(alice, "POST", `${requests()}/${conflictId}/apply`)).status).toBe(200);
    expect((await versions()).huddle).toBe(4);
  });

  it("rejects on one rejection, lets the author cancel, and refuses cancelling what is applied", async () => {
    const created = await as(alice, "POST", requests(), { title: "Nobody", changes: [{ feature: "calls", config: { variants: [] } }] });
    const rejectId = created.body.changeRequest.id;
    const rejected = await as(owner, "POST", `${requests()}/${rejectId}/reviews`, { decision: "reject", comment: "not now" });
    expect(rejected.body.changeRequest.state).toBe("rejected");
    expect((await as(bob, "POST", `${requests()}/${rejectId}/cancel`)).status).toBe(403);
    const cancelled = await as(alice, "POST", `${requests()}/${rejectId}/cancel`);
    expect(cancelled.body.changeRequest.state).toBe("cancelled");
    expect((await as(alice, "POST", `${requests()}/${id}/cancel`)).status).toBe(409);
    // A cancelled request edited is open again.
    expect((await as(alice, "PUT", `${requests()}/${rejectId}`, { description: "maybe later" })).body.changeRequest.state).toBe("open");
    const states = (await admin("GET", requests())).body.changeRequests.map((each: { state: string }) => each.state);
    expect(states).toEqual(["open", "applied", "applied"]);
    expect((await admin("GET", `${requests()}?state=applied`)).body.changeRequests).toHaveLength(2);
    const unknown = await admin("GET", `${requests()}?state=done`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.validationErrors[0].path).toBe("state");
  });

  it("lets a member approve their own request where the policy allows it, and applies at once where none is required", async () => {
    await admin("PUT", `/admin/environments/${keys.production.id}/policy`, { allowSelfApproval: true });
    const own = await as(alice, "POST", requests(), { title: "Self", changes: [{ feature: "calls", config: { variants: [] } }] });
    expect((await as(alice, "POST", `${requests()}/${own.body.changeRequest.id}/reviews`, { decision: "approve" })).body.changeRequest.state).toBe("approved");
    const dev = await as(alice, "POST", `/admin/environments/${keys.development.id}/change-requests`, { title: "Dev", changes: [{ feature: "calls", config: { variants: BLUE } }] });
    expect(dev.body.changeRequest.state).toBe("open");
    const applied = await as(alice, "POST", `/admin/environments/${keys.development.id}/change-requests/${dev.body.changeRequest.id}/apply`);
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
  });
});
