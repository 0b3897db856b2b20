/**
 * Flag names (issue 18 part 2): set by the management API and `switchyard features put --name`, shown beside keys
 * (feature lists, `GET /features`, analytics, the Reflag CLI's `/api`), audited, and served as `optIn.name`.
 */
import { switchyardCli } from "../support/switchyard-cli.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const switchyard = switchyardCli;

describe(`flag names (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    server = await startServer();
    keys = await createApp(server.url, server.adminToken);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("sets, shows and clears a name through the management API, auditing each change", async () => {
    const created = await admin("PUT", `/admin/apps/${keys.app.id}/features/beta-editor`, { name: "  Beta editor ", optInEnabled: true });
    expect(created.status).toBe(200);
    expect(created.body.feature).toMatchObject({ key: "beta-editor", name: "Beta editor" });
    const shown = await admin("GET", `/admin/environments/${keys.production.id}/features/beta-editor`);
    expect(shown.body.feature.name).toBe("Beta editor");
    const renamed = await admin("PUT", `/admin/apps/${keys.app.id}/features/beta-editor`, { name: "Collaborative editor" });
    expect(renamed.body.feature.name).toBe("Collaborative editor");
    const audit = await admin("GET", "/admin/audit?entity=feature");
    const update = audit.body.entries.filter((entry: { action: string }) => entry.action === "feature.update").at(-1);
    expect(update.details.changes).toEqual({ name: { from: "Beta editor", to: "Collaborative editor" } });
    // A feature without a name shows its key; null clears one.
    const plain = await admin("PUT", `/admin/apps/${keys.app.id}/features/plain`, {});
    expect(plain.body.feature.name).toBe("plain");
    const cleared = await admin("PUT", `/admin/apps/${keys.app.id}/features/plain`, { name: null });
    expect(cleared.body.feature.name).toBe("plain");
  });

  it("refuses names that are empty, too long or hold control characters, naming the field", async () => {
    for (const name of ["", "   ", "x".repeat(256), "a\nb", 42]) {
      const reply = await admin("PUT", `/admin/apps/${keys.app.id}/features/bad`, { name });
      expect(reply.status, JSON.stringify(name)).toBe(400);
      expect(reply.body.error.validationErrors[0].path).toBe("name");
    }
  });

  it("serves the name as optIn.name and in GET /features", async () => {
    const evaluated = await request(server.url, "GET", `/features/evaluated?context.user.id=u1&publishableKey=${keys.production.publishableKey}`);
    expect(evaluated.body.features["beta-editor"].optIn).toMatchObject({ name: "Collaborative editor", isOptedIn: false });
    const rules = await request(server.url, "GET", "/features", { token: keys.production.secretKey });
    const byKey = Object.fromEntries(rules.body.features.map((feature: { key: string; name: string }) => [feature.key, feature.name]));
    expect(byKey).toMatchObject({ "beta-editor": "Collaborative editor", plain: "plain" });
  });

  it("sets a name from the switchyard CLI and shows it in its lists and analytics tables", async () => {
    const put = await switchyard(server, ["features", "put", keys.app.id, "export", "--name", "CSV export"]);
    expect(put.code, put.stderr).toBe(0);
    expect(JSON.parse(put.stdout).feature).toMatchObject({ key: "export", name: "CSV export" });
    const list = await switchyard(server, ["features", "list", keys.app.id]);
    const names = JSON.parse(list.stdout).features.map((feature: { key: string; name: string }) => `${feature.key}=${feature.name}`);
    expect(names).toEqual(expect.arrayContaining(["export=CSV export", "beta-editor=Collaborative editor"]));
    const table = await switchyard(server, ["analytics", "features", keys.production.id]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^export\s+CSV export\s+0\s/m);
    const summary = await admin("GET", `/admin/environments/${keys.production.id}/analytics/features`);
    expect(summary.body.features.find((feature: { key: string }) => feature.key === "export").name).toBe("CSV export");
  });

  it("shows the name in the Reflag CLI's flag list answer", async () => {
    const listed = await request(server.url, "GET", `/api/apps/${keys.app.id}/features?envId=${keys.production.id}&sortBy=name`, { token: server.adminToken });
    expect(listed.body.data.map((flag: { name: string }) => flag.name)).toEqual(["CSV export", "Collaborative editor", "plain"]); // code-unit order
  });
  it("counts a change of a feature's fields as its last change in the feature list, after its rules' versions", async () => {
    const listed = async () =>
      (await admin("GET", `/admin/environments/${keys.production.id}/features`)).body.features.find((feature: { key: string }) => feature.key === "described").lastChange;
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/described`, { description: "first" })).status).toBe(200);
    // Made, not changed: nothing to report yet.
    expect(await listed()).toBeNull();
    await admin("PUT", `/admin/environments/${keys.production.id}/features/described/targeting`, { rules: [{ filter: { type: "constant", value: true } }] });
    expect(await listed()).toMatchObject({ kind: "targeting", version: 1, actor: { kind: "admin" } });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/described`, { description: "second" })).status).toBe(200);
    expect(await listed()).toMatchObject({ kind: "settings", version: null, actor: { kind: "admin" } });
    // Sending what is stored already changes nothing.
    const before = await listed();
    await admin("PUT", `/admin/apps/${keys.app.id}/features/described`, { description: "second" });
    expect(await listed()).toEqual(before);
  });
});
