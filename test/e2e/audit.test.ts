/**
 * Issue 16's audit log over real HTTP, on either twin: one entry for every kind of management change, with the
 * actor that made it (admin token, member session, member's API token, anonymous for a failed sign-in), the entity,
 * details and address; filters and paging; targeting and config history linked to their entries.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, createToken, PASSWORD, signIn, signInReply, type Session } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

interface Entry {
  cursor: string;
  at: string;
  actor: { kind: string; id: string; email?: string; memberId?: string };
  action: string;
  entity: { kind: string; id: string; key?: string; environmentId?: string };
  details: Record<string, any>;
  address: string | null;
}

describe(`audit log (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let owner: Session;
  let editor: Session;
  let ownerToken: { id: string; secret: string };
  let editorToken: { id: string; secret: string };
  let entries: Entry[];
  const expected: { action: string; actor: { kind: string; id: string }; entity: string }[] = [];

  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const byToken = (token: string, method: string, path: string, body?: unknown) => request(server.url, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const expect200 = async (reply: Promise<{ status: number; body: any }>) => {
    const answered = await reply;
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    return answered.body;
  };
  const ADMIN = { kind: "admin", id: "admin" };
  const member = (session: Session) => ({ kind: "member", id: session.memberId });
  const token = (made: { id: string }) => ({ kind: "token", id: made.id });

  beforeAll(async () => {
    server = await startServer({ env: { ...ACCOUNT_TEST_ENV } });
    const ownerMember = await createMember(server.url, server.adminToken, "owner@audit.test", "owner");
    expected.push({ action: "member.create", actor: ADMIN, entity: "member" });
    await createMember(server.url, server.adminToken, "editor@audit.test", "editor");
    expected.push({ action: "member.create", actor: ADMIN, entity: "member" });
    owner = await signIn(server.url, ownerMember.email);
    expected.push({ action: "session.sign-in", actor: member(owner), entity: "session" });
    editor = await signIn(server.url, "editor@audit.test");
    expected.push({ action: "session.sign-in", actor: member(editor), entity: "session" });
    ownerToken = await createToken(server.url, owner, "owner-ci");
    expected.push({ action: "token.create", actor: member(owner), entity: "token" });
    editorToken = await createToken(server.url, editor, "editor-ci");
    expected.push({ action: "token.create", actor: member(editor), entity: "token" });

    const app = (await expect200(asSession(server.url, owner, "POST", "/admin/apps", { name: "Audited" }))).app;
    expected.push({ action: "app.create", actor: member(owner), entity: "app" });
    const env = app.defaultEnvironmentId as string;
    await expect200(byToken(editorToken.secret, "POST", `/admin/apps/${app.id}/environments`, { name: "staging" }));
    expected.push({ action: "environment.create", actor: token(editorToken), entity: "environment" });
    await expect200(admin("POST", `/admin/environments/${env}/keys/rotate`, { kind: "secret" }));
    expected.push({ action: "key.rotate", actor: ADMIN, entity: "key" });
    await expect200(asSession(server.url, editor, "PUT", `/admin/apps/${app.id}/features/huddle`, { description: "Huddles" }));
    expected.push({ action: "feature.create", actor: member(editor), entity: "feature" });
    await expect200(byToken(editorToken.secret, "PUT", `/admin/apps/${app.id}/features/huddle`, { optInEnabled: true }));
    expected.push({ action: "feature.update", actor: token(editorToken), entity: "feature" });
    await expect200(asSession(server.url, editor, "PUT", `/admin/environments/${env}/features/huddle/targeting`, { rules: [{ filter: { type: "constant", value: true } }] }));
    expected.push({ action: "targeting.update", actor: member(editor), entity: "targeting" });
    await expect200(admin("PUT", `/admin/environments/${env}/features/huddle/config`, { variants: [] }));
    expected.push({ action: "config.update", actor: ADMIN, entity: "config" });
    await expect200(admin("PUT", `/admin/apps/${app.id}/features/old`, {}));
    expected.push({ action: "feature.create", actor: ADMIN, entity: "feature" });
    await expect200(byToken(ownerToken.secret, "DELETE", `/admin/apps/${app.id}/features/old`));
    expected.push({ action: "feature.archive", actor: token(ownerToken), entity: "feature" });
    await expect200(asSession(server.url, owner, "PUT", `/admin/environments/${env}/analytics/settings`, { retentionDays: 4 }));
    expected.push({ action: "analytics.settings", actor: member(owner), entity: "analytics" });
    await expect200(byToken(editorToken.secret, "POST", `/admin/environments/${env}/analytics/rebuild`));
    expected.push({ action: "analytics.rebuild", actor: token(editorToken), entity: "analytics" });

    const temp = await createMember(server.url, ownerToken.secret, "temp@audit.test", "viewer");
    expected.push({ action: "member.create", actor: token(ownerToken), entity: "member" });
    await expect200(asSession(server.url, owner, "PATCH", `/admin/members/${temp.id}`, { role: "editor" }));
    expected.push({ action: "member.update", actor: member(owner), entity: "member" });
    const reset = (await expect200(asSession(server.url, owner, "POST", `/admin/members/${temp.id}/password-reset`))).reset;
    expected.push({ action: "member.password-reset-issue", actor: member(owner), entity: "member" });
    await expect200(request(server.url, "POST", "/admin/password-reset", { body: { token: reset.token, password: "another long password" } }));
    expected.push({ action: "member.password-reset", actor: { kind: "member", id: temp.id }, entity: "member" });
    expect((await signInReply(server.url, "temp@audit.test", PASSWORD)).status).toBe(401);
    expected.push({ action: "session.sign-in-failed", actor: { kind: "anonymous", id: "anonymous" }, entity: "session" });
    await expect200(byToken(ownerToken.secret, "DELETE", `/admin/members/${temp.id}`));
    expected.push({ action: "member.remove", actor: token(ownerToken), entity: "member" });
    await expect200(asSession(server.url, editor, "DELETE", `/admin/tokens/${editorToken.id}`));
    expected.push({ action: "token.revoke", actor: member(editor), entity: "token" });
    await expect200(asSession(server.url, editor, "DELETE", "/admin/session"));
    expected.push({ action: "session.sign-out", actor: member(editor), entity: "session" });
    const rotated = (await expect200(asSession(server.url, owner, "POST", "/admin/admin-token/rotate"))).token;
    expected.push({ action: "admin-token.rotate", actor: member(owner), entity: "admin-token" });
    await expect200(byToken(ownerToken.secret, "DELETE", "/admin/admin-token"));
    expected.push({ action: "admin-token.disable", actor: token(ownerToken), entity: "admin-token" });
    expect((await request(server.url, "GET", "/admin/apps", { token: rotated })).status).toBe(401);
    server.adminToken = (await expect200(asSession(server.url, owner, "POST", "/admin/admin-token/rotate"))).token;
    expected.push({ action: "admin-token.rotate", actor: member(owner), entity: "admin-token" });

    entries = (await expect200(admin("GET", "/admin/audit?limit=1000&order=oldest"))).entries;
  });
  afterAll(async () => {
    await server.stop();
  });

  it("has one entry per change, in order, each with the actor that made it", () => {
    expect(entries.map((entry) => `${entry.action} by ${entry.actor.kind}:${entry.actor.id} on ${entry.entity.kind}`)).toEqual(
      expected.map((entry) => `${entry.action} by ${entry.actor.kind}:${entry.actor.id} on ${entry.entity}`),
    );
    for (const entry of entries) {
      expect(entry.address).toBeTruthy();
      expect(Number.isNaN(Date.parse(entry.at))).toBe(false);
      if (entry.actor.kind === "member") expect(entry.actor.email).toMatch(/@audit\.test$/);
      if (entry.actor.kind === "token") expect(entry.actor.memberId).toMatch(/^mem_/);
    }
    // Cursors grow with the order of the entries.
    expect(entries.map((entry) => Number(entry.cursor))).toEqual(entries.map((_, index) => index + 1));
  });

  it("says what changed: fields with their old and new values, versions before and after", () => {
    const update = entries.find((entry) => entry.action === "feature.update")!;
    expect(update.entity).toMatchObject({ kind: "feature", key: "huddle" });
    expect(update.details.changes).toEqual({ optInEnabled: { from: false, to: true } });
    const targeting = entries.find((entry) => entry.action === "targeting.update")!;
    expect(targeting.details).toMatchObject({ fromVersion: 0, toVersion: 1 });
    const role = entries.find((entry) => entry.action === "member.update")!;
    expect(role.details.role).toEqual({ from: "viewer", to: "editor" });
    const settings = entries.find((entry) => entry.action === "analytics.settings")!;
    expect(settings.details).toEqual({ from: { retentionDays: 2 }, to: { retentionDays: 4 } });
    expect(JSON.stringify(entries)).not.toMatch(/scrypt|"salt"|"hash"|sya_[A-Za-z0-9]{43}|syr_[A-Za-z0-9]{43}/);
  });

  it("answers who changed a rule: history versions link to their audit entries", async () => {
    const app = entries.find((entry) => entry.action === "app.create")!;
    const shown = await request(server.url, "GET", `/admin/apps/${app.entity.id}`, { token: server.adminToken });
    const env = shown.body.app.defaultEnvironmentId;
    const history = await request(server.url, "GET", `/admin/environments/${env}/features/huddle/history`, { token: server.adminToken });
    const targeting = history.body.versions.find((version: { kind: string }) => version.kind === "targeting");
    expect(targeting.actor).toMatchObject({ kind: "member", id: editor.memberId });
    const linked = entries.find((entry) => entry.cursor === targeting.auditCursor)!;
    expect(linked.action).toBe("targeting.update");
    expect(linked.actor.id).toBe(editor.memberId);
  });

  it("lists newest first unless asked otherwise, and continues with older entries after a cursor (API.md §8)", async () => {
    const newestFirst = [...entries].reverse();
    const first = await request(server.url, "GET", "/admin/audit?limit=3", { token: server.adminToken });
    expect(first.body.entries.map((entry: Entry) => entry.cursor)).toEqual(newestFirst.slice(0, 3).map((entry) => entry.cursor));
    const second = await request(server.url, "GET", `/admin/audit?limit=3&after=${first.body.next}`, { token: server.adminToken });
    expect(second.body.entries.map((entry: Entry) => entry.cursor)).toEqual(newestFirst.slice(3, 6).map((entry) => entry.cursor));
    expect((await request(server.url, "GET", "/admin/audit?order=sideways", { token: server.adminToken })).status).toBe(400);
  });

  it("filters by entity and by actor (a member's tokens included), and pages like the other logs", async () => {
    const features = await request(server.url, "GET", "/admin/audit?entity=feature&order=oldest", { token: server.adminToken });
    expect(features.body.entries.map((entry: Entry) => entry.action)).toEqual(["feature.create", "feature.update", "feature.create", "feature.archive"]);
    const byEditor = await asSession(server.url, owner, "GET", `/admin/audit?actor=${editor.memberId}&order=oldest`);
    expect(byEditor.body.entries.length).toBe(entries.filter((entry) => entry.actor.id === editor.memberId || entry.actor.memberId === editor.memberId).length);
    expect(byEditor.body.entries.some((entry: Entry) => entry.actor.kind === "token")).toBe(true);
    const byAdmin = await request(server.url, "GET", "/admin/audit?actor=admin&entity=member&order=oldest", { token: server.adminToken });
    expect(byAdmin.body.entries.map((entry: Entry) => entry.action)).toEqual(["member.create", "member.create"]);
    const first = await request(server.url, "GET", "/admin/audit?limit=3&order=oldest", { token: server.adminToken });
    expect(first.body.entries).toHaveLength(3);
    const second = await request(server.url, "GET", `/admin/audit?limit=3&order=oldest&after=${first.body.next}`, { token: server.adminToken });
    expect(second.body.entries[0].cursor).toBe(entries[3]!.cursor);
    const end = await request(server.url, "GET", `/admin/audit?order=oldest&after=${entries[entries.length - 1]!.cursor}`, { token: server.adminToken });
    expect(end.body).toEqual({ success: true, entries: [], next: entries[entries.length - 1]!.cursor });
    expect((await request(server.url, "GET", "/admin/audit?after=zzz", { token: server.adminToken })).status).toBe(400);
  });
});
