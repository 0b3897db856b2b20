/**
 * Segments (issue 18 part 4) on either twin: named company filters, referenced from targeting and stages, served
 * inlined to the SDKs (the real @reflag/node-sdk evaluates GET /features locally), re-inlined as new targeting
 * versions when a segment changes, cycles refused, member companies paged; management API and switchyard CLI.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ReflagClient } from "@reflag/node-sdk";
import { switchyardCli } from "../support/switchyard-cli.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const SDK_FILTER_TYPES = new Set(["constant", "context", "rolloutPercentage", "group", "negation"]);
const planIs = (...plans: string[]) => ({ type: "context", field: "company.plan", operator: "ANY_OF", values: plans });

/** Every filter type a served tree uses. */
function filterTypes(tree: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(tree)) for (const item of tree) filterTypes(item, found);
  else if (typeof tree === "object" && tree !== null) {
    const type = (tree as { type?: unknown }).type;
    if (typeof type === "string") found.add(type);
    for (const value of Object.values(tree)) filterTypes(value, found);
  }
  return found;
}

const quietLogger = () => ({ debug() {}, info() {}, warn() {}, error() {} });

describe(`segments (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  const segmentIds: Record<string, string> = {};
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const base = () => `/admin/apps/${keys.app.id}/segments`;
  const switchyard = (args: string[]) => switchyardCli(server, args);

  beforeAll(async () => {
    server = await startServer();
    keys = await createApp(server.url, server.adminToken);
    await admin("PUT", `/admin/apps/${keys.app.id}/features/huddle`, {});
    await admin("PUT", `/admin/apps/${keys.app.id}/features/export`, {});
    // Stored companies: what member listing pages through and what evaluation fills contexts from.
    const companies = [
      ["acme", { plan: "pro", seats: 50 }],
      ["globex", { plan: "pro", seats: 3 }],
      ["hooli", { plan: "enterprise", seats: 900 }],
      ["initech", { plan: "free", seats: 20 }],
      ["umbrella", { plan: "enterprise", seats: 5 }],
    ] as const;
    for (const [companyId, attributes] of companies) {
      const reply = await request(server.url, "POST", "/company", { token: keys.production.secretKey, body: { companyId, attributes } });
      expect(reply.status).toBe(200);
    }
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("creates segments over company attributes, one naming another", async () => {
    const paying = await admin("POST", base(), { name: "Paying", filter: planIs("pro") });
    expect(paying.status, JSON.stringify(paying.body)).toBe(200);
    segmentIds.paying = paying.body.segment.id;
    expect(segmentIds.paying).toMatch(/^sg_[0-9A-Za-z]{10}$/);
    const big = await admin("POST", base(), {
      name: "Big paying",
      description: "Paying companies with more than 10 seats",
      filter: { type: "group", operator: "and", filters: [{ type: "segment", segmentId: segmentIds.paying }, { type: "context", field: "company.seats", operator: "GT", values: ["10"] }] },
    });
    expect(big.status, JSON.stringify(big.body)).toBe(200);
    segmentIds.big = big.body.segment.id;
    expect((await admin("GET", base())).body.segments.map((segment: { name: string }) => segment.name)).toEqual(["Big paying", "Paying"]);
    expect((await admin("GET", `${base()}/Paying`)).body.segment.id).toBe(segmentIds.paying);
  });

  it("refuses bad segments with 400 naming the field: user fields, unknown segments, cycles", async () => {
    const userField = await admin("POST", base(), { name: "Users", filter: { type: "context", field: "user.email", operator: "IS", values: ["a"] } });
    expect(userField.status).toBe(400);
    expect(userField.body.error.validationErrors[0].path).toBe("filter.field");
    const unknown = await admin("POST", base(), { name: "Ghost", filter: { type: "segment", segmentId: "sg_nope" } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.validationErrors[0]).toMatchObject({ path: "filter", message: expect.stringContaining("sg_nope") });
    const cycle = await admin("PATCH", `${base()}/${segmentIds.paying}`, { filter: { type: "group", operator: "or", filters: [planIs("pro"), { type: "segment", segmentId: segmentIds.big }] } });
    expect(cycle.status).toBe(400);
    expect(cycle.body.error.validationErrors[0]).toMatchObject({ path: "filter", message: expect.stringContaining(`${segmentIds.paying} → ${segmentIds.big} → ${segmentIds.paying}`) });
    const self = await admin("PATCH", `${base()}/${segmentIds.paying}`, { filter: { type: "segment", segmentId: segmentIds.paying } });
    expect(self.status).toBe(400);
    expect((await admin("POST", base(), { name: "Paying", filter: planIs("x") })).status).toBe(409);
    expect((await admin("POST", base(), { name: "No filter" })).body.error.validationErrors[0].path).toBe("filter");
  });

  it("serves targeting that names a segment with the segment inlined, and evaluates it so (the node SDK locally too)", async () => {
    const rules = [{ filter: { type: "segment", segmentId: segmentIds.big } }];
    const saved = await admin("PUT", `/admin/environments/${keys.production.id}/features/huddle/targeting`, { rules });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect(saved.body.targeting.segmentRules).toEqual(rules);
    const served = await request(server.url, "GET", "/features", { token: keys.production.secretKey });
    const huddle = served.body.features.find((feature: { key: string }) => feature.key === "huddle");
    expect(Object.keys(huddle.targeting)).toEqual(["version", "rules"]);
    expect([...filterTypes(huddle.targeting.rules)].every((type) => SDK_FILTER_TYPES.has(type))).toBe(true);
    expect(huddle.targeting.rules).toEqual([
      { filter: { type: "group", operator: "and", filters: [planIs("pro"), { type: "context", field: "company.seats", operator: "GT", values: ["10"] }] } },
    ]);
    // Remote evaluation fills the company's stored attributes in.
    const remote = async (companyId: string) =>
      (await request(server.url, "GET", `/features/evaluated?context.company.id=${companyId}&publishableKey=${keys.production.publishableKey}`)).body.features.huddle.isEnabled;
    expect(await remote("acme")).toBe(true);
    expect(await remote("globex")).toBe(false);
    expect(await remote("hooli")).toBe(false);
    const client = new ReflagClient({ secretKey: keys.production.secretKey, apiBaseUrl: server.url, offline: false, logger: quietLogger(), batchOptions: { flushOnExit: false }, flagsSyncMode: "polling" });
    try {
      await client.initialize();
      const local = (company: Record<string, unknown>) => client.getFlags({ company: company as { id: string }, enableTracking: false }).huddle!.isEnabled;
      expect(local({ id: "acme", plan: "pro", seats: 50 })).toBe(true);
      expect(local({ id: "globex", plan: "pro", seats: 3 })).toBe(false);
    } finally {
      await client.destroy?.();
    }
    const badRef = await admin("PUT", `/admin/environments/${keys.production.id}/features/huddle/targeting`, { rules: [{ filter: { type: "segment", segmentId: "sg_nope" } }] });
    expect(badRef.status).toBe(400);
    expect(badRef.body.error.validationErrors[0].message).toContain("sg_nope");
  });

  it("changing a segment writes new targeting versions of every feature using it, through segments that name it", async () => {
    // A stage naming the segment: export is put in it, so export's targeting names it too (in production).
    const stage = await admin("PATCH", `/admin/apps/${keys.app.id}/stages/Beta`, { targeting: { [keys.production.id]: { rules: [{ filter: { type: "segment", segmentId: segmentIds.paying } }] } } });
    expect(stage.status, JSON.stringify(stage.body)).toBe(200);
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/export/stage`, { stage: "Beta" })).status).toBe(200);
    const exportBefore = (await admin("GET", `/admin/environments/${keys.production.id}/features/export`)).body.targeting;
    expect(exportBefore.rules).toEqual([{ filter: planIs("pro") }]);
    const huddleBefore = (await admin("GET", `/admin/environments/${keys.production.id}/features/huddle`)).body.targeting.version;
    const flagStateBefore = (await request(server.url, "GET", "/features", { token: keys.production.secretKey })).body.flagStateVersion;

    const changed = await admin("PATCH", `${base()}/${segmentIds.paying}`, { filter: planIs("pro", "enterprise") });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.retargeted.map((entry: { key: string; environmentId: string }) => `${entry.key}@${entry.environmentId}`).sort()).toEqual(
      [`export@${keys.production.id}`, `huddle@${keys.production.id}`].sort(),
    );
    const huddleAfter = (await admin("GET", `/admin/environments/${keys.production.id}/features/huddle`)).body.targeting;
    expect(huddleAfter.version).toBe(huddleBefore + 1);
    expect(huddleAfter.rules[0].filter.filters[0]).toEqual(planIs("pro", "enterprise"));
    const exportAfter = (await admin("GET", `/admin/environments/${keys.production.id}/features/export`)).body.targeting;
    expect(exportAfter).toMatchObject({ version: exportBefore.version + 1, rules: [{ filter: planIs("pro", "enterprise") }] });
    const served = await request(server.url, "GET", "/features", { token: keys.production.secretKey });
    expect(served.body.flagStateVersion).toBe(flagStateBefore + 2);
    const remote = async (companyId: string) =>
      (await request(server.url, "GET", `/features/evaluated?context.company.id=${companyId}&publishableKey=${keys.production.publishableKey}`)).body.features;
    expect((await remote("hooli")).huddle.isEnabled).toBe(true);
    expect((await remote("umbrella")).huddle.isEnabled).toBe(false);
    expect((await remote("umbrella")).export.isEnabled).toBe(true);
    const audit = (await admin("GET", "/admin/audit?entity=segment")).body.entries[0];
    expect(audit).toMatchObject({ action: "segment.update", details: { retargeted: expect.any(Array) } });
    // A rename changes no served rule: no new versions.
    const renamed = await admin("PATCH", `${base()}/${segmentIds.paying}`, { name: "Paying customers" });
    expect(renamed.body.retargeted).toEqual([]);
  });

  it("refuses to delete a segment in use, and deletes one that is not", async () => {
    // Reads name who uses each segment: what the refusal below names.
    const paying = (await admin("GET", `${base()}/${segmentIds.paying}`)).body.segment;
    expect(paying.usedBy).toEqual({ segments: ["Big paying"], features: ["export"], stages: ["Beta"] });
    const listed = (await admin("GET", base())).body.segments.find((segment: { id: string }) => segment.id === segmentIds.big);
    expect(listed.usedBy).toEqual({ segments: [], features: ["huddle"], stages: [] });
    const inUse = await admin("DELETE", `${base()}/${segmentIds.paying}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.message).toContain("Big paying");
    const spare = await admin("POST", base(), { name: "Spare", filter: { type: "constant", value: true } });
    expect((await admin("DELETE", `${base()}/${spare.body.segment.id}`)).status).toBe(200);
    expect((await admin("GET", `${base()}/${spare.body.segment.id}`)).status).toBe(404);
  });

  it("pages through a segment's member companies", async () => {
    const path = `/admin/environments/${keys.production.id}/segments/${segmentIds.paying}/companies`;
    const first = await admin("GET", `${path}?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.companies.map((company: { id: string }) => company.id)).toEqual(["acme", "globex"]);
    expect(first.body.companies[0]).toMatchObject({ attributes: { plan: "pro", seats: 50 } });
    const second = await admin("GET", `${path}?limit=2&after=${first.body.next}`);
    expect(second.body.companies.map((company: { id: string }) => company.id)).toEqual(["hooli", "umbrella"]);
    expect(second.body.next).toBeNull();
    const fromHooli = await admin("GET", `${path}?limit=1&after=hooli`);
    expect(fromHooli.body).toMatchObject({ companies: [{ id: "umbrella" }], next: null });
    const big = await admin("GET", `/admin/environments/${keys.production.id}/segments/${segmentIds.big}/companies`);
    expect(big.body.companies.map((company: { id: string }) => company.id)).toEqual(["acme", "hooli"]);
    expect((await admin("GET", `${path}?limit=0`)).status).toBe(400);
    expect((await admin("GET", `/admin/environments/${keys.production.id}/segments/nope/companies`)).status).toBe(404);
  });

  it("does it from the switchyard CLI", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-segment-"));
    const file = join(dir, "filter.json");
    writeFileSync(file, JSON.stringify(planIs("free")));
    const created = await switchyard(["segments", "create", keys.app.id, "Free", "--filter", file, "--description", "Free plan"]);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout).segment).toMatchObject({ name: "Free", description: "Free plan" });
    const members = await switchyard(["segments", "companies", keys.production.id, "Free"]);
    expect(members.code, members.stderr).toBe(0);
    expect(JSON.parse(members.stdout).companies.map((company: { id: string }) => company.id)).toEqual(["initech"]);
    const list = await switchyard(["segments", "list", keys.app.id]);
    expect(JSON.parse(list.stdout).segments.map((segment: { name: string }) => segment.name)).toContain("Free");
    writeFileSync(file, JSON.stringify(planIs("free", "trial")));
    const updated = await switchyard(["segments", "update", keys.app.id, "Free", "--filter", file]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout).segment.filter).toEqual(planIs("free", "trial"));
    const removed = await switchyard(["segments", "delete", keys.app.id, "Free"]);
    expect(removed.code, removed.stderr).toBe(0);
  });
});
