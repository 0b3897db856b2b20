/**
 * Flags as files (API.md §13.2) through the real service: export, dry run, import as one change (versions, audit,
 * live updates), the round trip into a fresh app, idempotence, validation naming every bad path with nothing
 * changed, roles, and the `switchyard export / import` CLI.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, asSession, createMember, signIn } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";
import { openSse } from "../support/sse.js";
import { switchyardCli } from "../support/switchyard-cli.js";

type App = Awaited<ReturnType<typeof createApp>>;

const planIs = (...plans: string[]) => ({ type: "context", field: "company.plan", operator: "ANY_OF", values: plans });

describe("flags as files: export, dry run, import", () => {
  let server: TestServer;
  let source: App;
  let dir: string;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const features = async (secretKey: string) => (await request(server.url, "GET", "/features", { token: secretKey })).body;
  const auditCount = async () => (await admin("GET", "/admin/audit?limit=1000")).body.entries.length as number;

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    dir = mkdtempSync(join(tmpdir(), "switchyard-flags-"));
    source = await createApp(server.url, server.adminToken, "Source");
    const app = source.app.id;
    const pro = await admin("POST", `/admin/apps/${app}/segments`, { name: "Pro", description: "Paying", filter: planIs("pro", "enterprise") });
    expect(pro.status).toBe(200);
    expect((await admin("POST", `/admin/apps/${app}/segments`, { name: "Big pro", filter: { type: "group", operator: "and", filters: [{ type: "segment", segmentId: pro.body.segment.id }, { type: "context", field: "company.seats", operator: "GT", values: ["10"] }] } })).status).toBe(200);
    expect((await admin("PUT", `/admin/apps/${app}/features/huddle`, { name: "Huddles", description: "Audio rooms", link: "https://example.com/h", optInEnabled: true })).status).toBe(200);
    expect((await admin("PUT", `/admin/apps/${app}/features/calls`, {})).status).toBe(200);
    expect((await admin("PUT", `/admin/apps/${app}/features/beta-thing`, {})).status).toBe(200);
    expect((await admin("PUT", `/admin/apps/${app}/features/beta-thing/stage`, { stage: "Beta" })).status).toBe(200);
    const rules = [{ filter: { type: "segment", segmentId: pro.body.segment.id } }, { filter: { type: "rolloutPercentage", key: "huddle", partialRolloutAttribute: "user.id", partialRolloutThreshold: 25_000 } }];
    expect((await admin("PUT", `/admin/environments/${source.production.id}/features/huddle/targeting`, { rules })).status).toBe(200);
    expect((await admin("PUT", `/admin/environments/${source.development.id}/features/huddle/targeting`, { rules: [{ filter: { type: "constant", value: true } }] })).status).toBe(200);
    expect((await admin("PUT", `/admin/environments/${source.production.id}/features/huddle/config`, { variants: [{ filter: planIs("enterprise"), key: "big", payload: { seats: 100 } }, { filter: { type: "constant", value: true }, key: "small" }] })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("exports every live feature by key with every field, rules as saved by environment name, segments and stages by name", async () => {
    const reply = await admin("GET", `/admin/apps/${source.app.id}/export`);
    expect(reply.status).toBe(200);
    const document = reply.body.document;
    expect(document.format).toBe("switchyard.flags/v1");
    expect(document.app).toEqual({ id: source.app.id, name: "Source" });
    expect(document.environments).toEqual(["production", "development"]);
    expect(document.features.map((feature: { key: string }) => feature.key)).toEqual(["beta-thing", "calls", "huddle"]);
    const huddle = document.features[2];
    expect(huddle).toMatchObject({ key: "huddle", name: "Huddles", description: "Audio rooms", link: "https://example.com/h", stage: null, optInEnabled: true });
    expect(huddle.environments.production.rules[0]).toEqual({ filter: { type: "segment", segment: "Pro" } });
    expect(huddle.environments.production.variants).toHaveLength(2);
    expect(huddle.environments.development).toEqual({ rules: [{ filter: { type: "constant", value: true } }], variants: [] });
    expect(document.features[1]).toEqual({ key: "calls", name: null, description: null, link: null, stage: null, optInEnabled: false, environments: { production: { rules: [], variants: [] }, development: { rules: [], variants: [] } } });
    expect(document.features[0].stage).toBe("Beta");
    expect(document.segments.map((segment: { name: string }) => segment.name)).toEqual(["Big pro", "Pro"]);
    expect(document.segments[0].filter.filters[0]).toEqual({ type: "segment", segment: "Pro" });
    expect(document.stages.map((stage: { name: string; order: number }) => [stage.name, stage.order])).toEqual([["In development", 1], ["Internal", 2], ["Beta", 3], ["General availability", 4]]);
    // No ids, keys, versions or tracked data anywhere in it.
    const text = JSON.stringify({ ...document, app: undefined });
    for (const secret of [source.production.id, source.production.secretKey, source.production.publishableKey, "segmentId", "version", "ft"]) expect(text.includes(`"${secret}`)).toBe(false);
    const again = await admin("GET", `/admin/apps/${source.app.id}/export`);
    expect({ ...again.body.document, exportedAt: null }).toEqual({ ...document, exportedAt: null });
  });

  it("round-trips into a fresh app: same GET /features in every environment, same export, and a second import changes nothing", async () => {
    const document = (await admin("GET", `/admin/apps/${source.app.id}/export`)).body.document;
    const target = await createApp(server.url, server.adminToken, "Target");
    const first = await admin("POST", `/admin/apps/${target.app.id}/import`, document);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, dryRun: false, summary: { created: 6, changed: 0, unchanged: 0 }, warnings: [] });
    expect(first.body.features.map((feature: { key: string; change: string }) => [feature.key, feature.change])).toEqual([["beta-thing", "created"], ["calls", "created"], ["huddle", "created"]]);
    expect(first.body.segments).toEqual([{ name: "Big pro", change: "created" }, { name: "Pro", change: "created" }]);
    expect(first.body.stages.map((stage: { change: string }) => stage.change)).toEqual(["unchanged", "unchanged", "unchanged", "unchanged"]);
    const huddleAnswer = first.body.features[2].environments;
    expect(huddleAnswer).toEqual([{ name: "production", change: "created", targeting: true, config: true }, { name: "development", change: "created", targeting: true, config: false }]);

    const comparable = (answer: Record<string, any>) =>
      answer.features.map((feature: Record<string, any>) => ({ key: feature.key, name: feature.name, description: feature.description, link: feature.link, stage: feature.stage, rules: feature.targeting.rules, variants: feature.config.variants }));
    for (const environment of ["production", "development"] as const) {
      expect(comparable(await features(target[environment].secretKey))).toEqual(comparable(await features(source[environment].secretKey)));
    }
    const exported = (await admin("GET", `/admin/apps/${target.app.id}/export`)).body.document;
    expect({ ...exported, exportedAt: null, app: null }).toEqual({ ...document, exportedAt: null, app: null });

    const versionBefore = (await features(target.production.secretKey)).flagStateVersion;
    const entriesBefore = await auditCount();
    const second = await admin("POST", `/admin/apps/${target.app.id}/import`, document);
    expect(second.body.summary).toEqual({ created: 0, changed: 0, unchanged: 6 });
    expect(second.body.features.every((feature: { change: string }) => feature.change === "unchanged")).toBe(true);
    expect((await features(target.production.secretKey)).flagStateVersion).toBe(versionBefore);
    expect(await auditCount()).toBe(entriesBefore);
  });

  it("a dry run lists the changes and makes none; the import then makes them as one change: versions, one audit entry, one live event per environment", async () => {
    const document = (await admin("GET", `/admin/apps/${source.app.id}/export`)).body.document;
    const huddle = document.features.find((feature: { key: string }) => feature.key === "huddle");
    huddle.description = "Audio and video rooms";
    huddle.environments.production.rules = [{ filter: { type: "segment", segment: "Big pro" } }];
    delete huddle.environments.development;
    document.features.push({ key: "new-one", environments: { development: { rules: [{ filter: { type: "constant", value: true } }] } } });
    document.segments = [{ name: "Pro", filter: planIs("pro") }];
    document.stages = [];

    const before = await features(source.production.secretKey);
    const entriesBefore = await auditCount();
    const stream = await openSse(`${server.url}/sse/server`, { authorization: `Bearer ${source.production.secretKey}` });
    try {
      const dry = await admin("POST", `/admin/apps/${source.app.id}/import?dryRun=true`, document);
      expect(dry.status).toBe(200);
      expect(dry.body.dryRun).toBe(true);
      const byKey = Object.fromEntries(dry.body.features.map((feature: { key: string }) => [feature.key, feature]));
      expect(byKey.huddle).toEqual({ key: "huddle", change: "changed", environments: [{ name: "production", change: "changed", targeting: true, config: false }] });
      expect(byKey.calls.change).toBe("unchanged");
      expect(byKey["new-one"]).toEqual({ key: "new-one", change: "created", environments: [{ name: "development", change: "created", targeting: true, config: false }] });
      expect(dry.body.segments).toEqual([{ name: "Pro", change: "changed" }]);
      expect(dry.body.summary).toEqual({ created: 1, changed: 1, unchanged: 4 });
      expect(await features(source.production.secretKey)).toEqual(before);
      expect(await auditCount()).toBe(entriesBefore);
      expect((await admin("GET", `/admin/apps/${source.app.id}/export`)).body.document.features.map((feature: { key: string }) => feature.key)).not.toContain("new-one");

      const applied = await admin("POST", `/admin/apps/${source.app.id}/import`, document);
      expect(applied.status).toBe(200);
      expect({ ...applied.body, dryRun: true }).toEqual(dry.body);
      const after = await features(source.production.secretKey);
      expect(after.flagStateVersion).toBeGreaterThan(before.flagStateVersion);
      await stream.waitFor((connection) => connection.versions().includes(after.flagStateVersion), 5_000);
      expect(stream.versions().filter((version) => version > before.flagStateVersion)).toEqual([after.flagStateVersion]);
      const served = after.features.find((feature: { key: string }) => feature.key === "huddle");
      // Served inlined: Big pro = Pro (now plan pro only) and seats > 10.
      expect(served.description).toBe("Audio and video rooms");
      expect(served.targeting.rules).toEqual([{ filter: { type: "group", operator: "and", filters: [planIs("pro"), { type: "context", field: "company.seats", operator: "GT", values: ["10"] }] } }]);
      // The audit log lists oldest first here (docs/API.md §8).
      const entries = (await admin("GET", "/admin/audit?limit=1000")).body.entries;
      expect(entries[0]).toMatchObject({ action: "flags.import", entity: { kind: "app", id: source.app.id }, details: { source: "document", summary: { created: 1, changed: 1, unchanged: 4 } } });
      expect(await auditCount()).toBe(entriesBefore + 1);
      const history = (await admin("GET", `/admin/environments/${source.production.id}/features/huddle/history`)).body.versions;
      const newest = history.filter((version: { kind: string }) => version.kind === "targeting").at(-1);
      expect(newest).toMatchObject({ kind: "targeting", version: served.targeting.version, auditCursor: entries[0].cursor });
      expect(history.filter((version: { kind: string }) => version.kind === "config")).toHaveLength(1);
    } finally {
      stream.close();
    }
  });

  it("exports and imports again a rule tree as deep as the management API accepts", async () => {
    const deep = await createApp(server.url, server.adminToken, "Deep");
    // Groups nest two JSON levels per filter level: 31 levels fill the 64 levels a targeting PUT may nest.
    let filter: Record<string, unknown> = { type: "constant", value: true };
    for (let level = 1; level < 31; level++) filter = { type: "group", operator: "and", filters: [filter] };
    expect((await admin("PUT", `/admin/apps/${deep.app.id}/features/deep`, {})).status).toBe(200);
    expect((await admin("PUT", `/admin/environments/${deep.production.id}/features/deep/targeting`, { rules: [{ filter }] })).status).toBe(200);
    const document = (await admin("GET", `/admin/apps/${deep.app.id}/export`)).body.document;
    const target = await createApp(server.url, server.adminToken, "Deep copy");
    const imported = await admin("POST", `/admin/apps/${target.app.id}/import`, document);
    expect(imported.status, JSON.stringify(imported.body.error)).toBe(200);
    expect((await features(target.production.secretKey)).features[0].targeting.rules).toEqual([{ filter }]);
  });

  it("re-inlines a changed segment into features the document does not name, in the same change", async () => {
    const other = await createApp(server.url, server.adminToken, "Segments");
    const segment = await admin("POST", `/admin/apps/${other.app.id}/segments`, { name: "Big", filter: { type: "context", field: "company.seats", operator: "GT", values: ["100"] } });
    await admin("PUT", `/admin/apps/${other.app.id}/features/uses-big`, {});
    await admin("PUT", `/admin/environments/${other.production.id}/features/uses-big/targeting`, { rules: [{ filter: { type: "segment", segmentId: segment.body.segment.id } }] });
    const smaller = { type: "context", field: "company.seats", operator: "GT", values: ["10"] };
    const document = { format: "switchyard.flags/v1", segments: [{ name: "Big", filter: smaller }], features: [] };
    const dry = await admin("POST", `/admin/apps/${other.app.id}/import?dryRun=true`, document);
    expect(dry.body).toMatchObject({ segments: [{ name: "Big", change: "changed" }], retargeted: [{ key: "uses-big", environment: "production" }], summary: { created: 0, changed: 0, unchanged: 0 } });
    const applied = await admin("POST", `/admin/apps/${other.app.id}/import`, document);
    expect(applied.body.retargeted).toEqual([{ key: "uses-big", environment: "production" }]);
    const served = (await features(other.production.secretKey)).features[0].targeting;
    expect(served).toMatchObject({ version: 2, rules: [{ filter: smaller }] });
  });

  it("refuses, writing nothing, a document whose segments would make a rule too deep once inlined", async () => {
    const other = await createApp(server.url, server.adminToken, "Too deep");
    let deep: Record<string, unknown> = { type: "context", field: "company.plan", operator: "IS", values: ["pro"] };
    for (let level = 1; level < 31; level++) deep = { type: "negation", filter: deep };
    const document = {
      format: "switchyard.flags/v1",
      segments: [{ name: "Deep", filter: deep }],
      features: [{ key: "first", environments: { production: { rules: [{ filter: { type: "constant", value: true } }] } } }, { key: "second", environments: { production: { rules: [{ filter: { type: "negation", filter: { type: "negation", filter: { type: "segment", segment: "Deep" } } } }] } } }],
    };
    const refused = await admin("POST", `/admin/apps/${other.app.id}/import`, document);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("INVALID_DOCUMENT");
    expect(refused.body.error.validationErrors[0].path).toBe("features.1.environments.production.rules");
    expect((await features(other.production.secretKey)).features).toEqual([]);
    expect((await admin("GET", `/admin/apps/${other.app.id}/segments`)).body.segments).toEqual([]);
  });

  it("refuses an invalid document with 400 INVALID_DOCUMENT naming each bad path, and changes nothing", async () => {
    const path = `/admin/apps/${source.app.id}/import`;
    const before = await admin("GET", `/admin/apps/${source.app.id}/export`);
    const entriesBefore = await auditCount();
    const wrongFormat = await admin("POST", path, { format: "switchyard.flags/v2", features: "nope", typo: 1 });
    expect(wrongFormat.status).toBe(400);
    expect(wrongFormat.body.error.code).toBe("INVALID_DOCUMENT");
    expect(wrongFormat.body.error.validationErrors).toEqual([{ path: "format", message: expect.any(String) }]);

    const bad = await admin("POST", path, {
      format: "switchyard.flags/v1",
      segmnts: [],
      segments: [{ name: "Loop", filter: { type: "segment", segment: "Loop" } }],
      stages: [{ name: "Soon", order: 1.5 }],
      features: [
        { key: "ok-one", environments: { production: { rules: [] } } },
        { key: "", descripton: "typo" },
        { key: "ok-one", environments: { staging: { rules: [] }, production: { rules: [{ filter: { type: "context", field: "user.id", operator: "SOUNDS_LIKE", values: ["a"] } }], variants: [{ filter: { type: "constant", value: true } }] } } },
        { key: "refs", environments: { development: { rules: [{ filter: { type: "segment", segment: "Nobody" } }], variants: "no" } } },
      ],
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("INVALID_DOCUMENT");
    const paths = bad.body.error.validationErrors.map((issue: { path: string }) => issue.path);
    for (const expected of [
      "segmnts",
      "segments.0.filter",
      "stages.0.order",
      "features.1.key",
      "features.1.descripton",
      "features.2.key",
      "features.2.environments.staging",
      "features.2.environments.production.rules.0.filter.operator",
      "features.2.environments.production.variants.0.key",
      "features.3.environments.development.rules.0.filter.segment",
      "features.3.environments.development.variants",
    ]) {
      expect(paths, expected).toContain(expected);
    }
    expect((await admin("GET", `/admin/apps/${source.app.id}/export`)).body.document.features).toEqual(before.body.document.features);
    expect(await auditCount()).toBe(entriesBefore);
    const badQuery = await admin("POST", `${path}?dryRun=maybe`, before.body.document);
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error.validationErrors[0].path).toBe("dryRun");
  });

  it("refuses to export or import by name an app whose environment names repeat (409)", async () => {
    const twice = await createApp(server.url, server.adminToken, "Twice");
    expect((await admin("POST", `/admin/apps/${twice.app.id}/environments`, { name: "production" })).status).toBe(200);
    const exported = await admin("GET", `/admin/apps/${twice.app.id}/export`);
    expect(exported.status).toBe(409);
    expect(exported.body.error.code).toBe("CONFLICT");
    const imported = await admin("POST", `/admin/apps/${twice.app.id}/import?dryRun=true`, { format: "switchyard.flags/v1", features: [] });
    expect(imported.status).toBe(409);
  });

  it("lets every role export, and only editors, owners and the admin token import", async () => {
    await createMember(server.url, server.adminToken, "viewer@example.com", "viewer");
    await createMember(server.url, server.adminToken, "editor@example.com", "editor");
    const viewer = await signIn(server.url, "viewer@example.com");
    const editor = await signIn(server.url, "editor@example.com");
    const exported = await asSession(server.url, viewer, "GET", `/admin/apps/${source.app.id}/export`);
    expect(exported.status).toBe(200);
    const refused = await asSession(server.url, viewer, "POST", `/admin/apps/${source.app.id}/import?dryRun=true`, exported.body.document);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe("FORBIDDEN");
    const allowed = await asSession(server.url, editor, "POST", `/admin/apps/${source.app.id}/import?dryRun=true`, exported.body.document);
    expect(allowed.status).toBe(200);
    expect(allowed.body.summary.changed).toBe(0);
    const anonymous = await request(server.url, "GET", `/admin/apps/${source.app.id}/export`);
    expect(anonymous.status).toBe(401);
    const environmentKey = await request(server.url, "GET", `/admin/apps/${source.app.id}/export`, { token: source.production.secretKey });
    expect(environmentKey.status).toBe(403);
    expect((await admin("GET", "/admin/apps/app_nothere00/export")).status).toBe(404);
  });

  it("switchyard export / import [--dry-run]: a file checked in CI and applied on merge", async () => {
    const target = await createApp(server.url, server.adminToken, "From CLI");
    const file = join(dir, "flags.json");
    const exported = await switchyardCli(server, ["export", source.app.id, "--out", file]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toEqual({ success: true, file });
    expect(JSON.parse(readFileSync(file, "utf8")).format).toBe("switchyard.flags/v1");
    const toStdout = await switchyardCli(server, ["export", source.app.id]);
    expect(toStdout.code, toStdout.stderr).toBe(0);
    expect(JSON.parse(toStdout.stdout).features.length).toBe(JSON.parse(readFileSync(file, "utf8")).features.length);

    const dry = await switchyardCli(server, ["import", target.app.id, file, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ success: true, dryRun: true });
    expect(JSON.parse(dry.stdout).summary.created).toBeGreaterThan(0);
    expect((await features(target.production.secretKey)).features).toEqual([]);
    const applied = await switchyardCli(server, ["import", target.app.id, file]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(applied.stdout).dryRun).toBe(false);
    expect((await features(target.production.secretKey)).features.length).toBe(JSON.parse(readFileSync(file, "utf8")).features.length);

    const broken = join(dir, "broken.json");
    writeFileSync(broken, JSON.stringify({ format: "switchyard.flags/v1", features: [{ key: "x", enviroments: {} }] }));
    const refused = await switchyardCli(server, ["import", target.app.id, broken, "--dry-run"]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout).error).toMatchObject({ code: "INVALID_DOCUMENT", validationErrors: [{ path: "features.0.enviroments", message: "unknown field" }] });
  });
});
