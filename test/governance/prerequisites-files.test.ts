/**
 * Prerequisites in flags as files (API.md §13.2, §15) through the real service: an export carries each feature's
 * prerequisites where it has any, an import into a fresh app recreates them (served compiled in, as in the source),
 * a second import changes nothing, and a document whose prerequisites name an unknown feature or close a cycle is
 * refused naming the path, with nothing changed. Writing prerequisites by import is held by the approval policy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";

const PRO = { type: "context", field: "company.plan", operator: "IS", values: ["pro"] };
const EVERYONE = [{ filter: { type: "constant", value: true } }];

describe("prerequisites in flags as files", () => {
  let server: TestServer;
  let source: Awaited<ReturnType<typeof createApp>>;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const served = async (secretKey: string) => (await request(server.url, "GET", "/features", { token: secretKey })).body;
  const exportOf = async (appId: string) => (await admin("GET", `/admin/apps/${appId}/export`)).body.document;

  beforeAll(async () => {
    server = await startServer();
    source = await createApp(server.url, server.adminToken, "Source");
    for (const key of ["billing", "invoices"]) await admin("PUT", `/admin/apps/${source.app.id}/features/${key}`, {});
    await admin("PUT", `/admin/environments/${source.production.id}/features/billing/targeting`, { rules: [{ filter: PRO }] });
    await admin("PUT", `/admin/environments/${source.production.id}/features/invoices/targeting`, { rules: EVERYONE });
    const put = await admin("PUT", `/admin/environments/${source.production.id}/features/invoices/prerequisites`, { prerequisites: [{ feature: "billing", enabled: true }] });
    expect(put.status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("exports prerequisites where a feature has any, and an import into a fresh app recreates them", async () => {
    const document = await exportOf(source.app.id);
    const invoices = document.features.find((feature: { key: string }) => feature.key === "invoices");
    expect(invoices.environments.production).toEqual({ rules: EVERYONE, variants: [], prerequisites: [{ feature: "billing", enabled: true }] });
    expect(invoices.environments.development).toEqual({ rules: [], variants: [] });

    const target = await createApp(server.url, server.adminToken, "Target");
    const imported = await admin("POST", `/admin/apps/${target.app.id}/import`, document);
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    const answer = imported.body.features.find((feature: { key: string }) => feature.key === "invoices");
    expect(answer.environments).toEqual([
      { name: "production", change: "created", targeting: true, config: false, prerequisites: true },
      { name: "development", change: "created", targeting: false, config: false },
    ]);
    const rulesOf = (body: { features: { key: string; prerequisites: unknown; targeting: { rules: unknown } }[] }) =>
      Object.fromEntries(body.features.map((feature) => [feature.key, { prerequisites: feature.prerequisites, rules: feature.targeting.rules }]));
    expect(rulesOf(await served(target.production.secretKey))).toEqual(rulesOf(await served(source.production.secretKey)));
    expect((await request(server.url, "GET", `/features/evaluated?context.company.plan=pro&publishableKey=${target.production.publishableKey}`)).body.features.invoices.isEnabled).toBe(true);
    expect((await request(server.url, "GET", `/features/evaluated?context.company.plan=free&publishableKey=${target.production.publishableKey}`)).body.features.invoices.isEnabled).toBe(false);
    const history = (await admin("GET", `/admin/environments/${target.production.id}/features/invoices/history`)).body.versions;
    expect(history.find((entry: { kind: string }) => entry.kind === "prerequisites")).toMatchObject({ version: 1, prerequisites: [{ feature: "billing", enabled: true }] });
    expect({ ...(await exportOf(target.app.id)), exportedAt: null, app: null }).toEqual({ ...document, exportedAt: null, app: null });

    const again = await admin("POST", `/admin/apps/${target.app.id}/import`, document);
    expect(again.body.summary).toEqual({ created: 0, changed: 0, unchanged: 4 });
  });

  it("refuses a document whose prerequisites name an unknown feature or close a cycle, naming the path, and changes nothing", async () => {
    const document = await exportOf(source.app.id);
    const before = (await served(source.production.secretKey)).flagStateVersion;
    const index = document.features.findIndex((feature: { key: string }) => feature.key === "billing");
    const withPrerequisites = (prerequisites: unknown) => ({
      ...document,
      features: document.features.map((feature: { key: string; environments: Record<string, unknown> }, at: number) =>
        at === index ? { ...feature, environments: { ...feature.environments, production: { ...(feature.environments.production as object), prerequisites } } } : feature,
      ),
    });
    const unknown = await admin("POST", `/admin/apps/${source.app.id}/import`, withPrerequisites([{ feature: "nope", enabled: true }]));
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.validationErrors).toEqual([{ path: `features.${index}.environments.production.prerequisites.0.feature`, message: "No feature nope in this app or the document" }]);
    const cycle = await admin("POST", `/admin/apps/${source.app.id}/import`, withPrerequisites([{ feature: "invoices", enabled: false }]));
    expect(cycle.status).toBe(400);
    expect(cycle.body.error.validationErrors).toEqual([{ path: `features.${index}.environments.production.prerequisites`, message: "These prerequisites would close a cycle: billing → invoices → billing" }]);
    const badShape = await admin("POST", `/admin/apps/${source.app.id}/import`, withPrerequisites([{ feature: "invoices", on: true }]));
    expect(badShape.status).toBe(400);
    expect(badShape.body.error.validationErrors.map((issue: { path: string }) => issue.path)).toContain(`features.${index}.environments.production.prerequisites.0.on`);
    expect((await served(source.production.secretKey)).flagStateVersion).toBe(before);
  });

  it("holds an import that writes prerequisites where the environment requires approval", async () => {
    const document = await exportOf(source.app.id);
    const target = await createApp(server.url, server.adminToken, "Held");
    // The features and their rules first, without prerequisites: then only the prerequisites remain to import.
    const withoutPrerequisites = { ...document, features: document.features.map((feature: { environments: Record<string, { prerequisites?: unknown }> }) => ({ ...feature, environments: Object.fromEntries(Object.entries(feature.environments).map(([name, entry]) => [name, { ...entry, prerequisites: [] }])) })) };
    expect((await admin("POST", `/admin/apps/${target.app.id}/import`, withoutPrerequisites)).status).toBe(200);
    expect((await admin("PUT", `/admin/environments/${target.production.id}/policy`, { requireApproval: true })).status).toBe(200);
    const held = await admin("POST", `/admin/apps/${target.app.id}/import`, document);
    expect(held.status).toBe(409);
    expect(held.body.error.code).toBe("APPROVAL_REQUIRED");
    expect((await served(target.production.secretKey)).features.find((feature: { key: string }) => feature.key === "invoices").prerequisites).toEqual([]);
  });
});
