/**
 * Release stages (issue 18 part 3) on either twin: the default stages, putting a feature in a stage (its targeting in
 * every environment as one change: one audit entry, one flagStateVersion bump per environment), editing a stage and
 * re-applying it, through the management API, the switchyard CLI and the Reflag CLI's `/api`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { switchyardCli } from "../support/switchyard-cli.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, createMember, createToken, signIn } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { reflagProject, runReflag } from "../support/reflag-cli.js";
import { openSse } from "../support/sse.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const EVERYONE = [{ filter: { type: "constant", value: true } }];
const BETA_COMPANIES = [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["beta"] } }];

describe(`release stages (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
  const versions = async () => {
    const app = await admin("GET", `/admin/apps/${keys.app.id}`);
    return Object.fromEntries(app.body.app.environments.map((environment: { id: string; flagStateVersion: number }) => [environment.id, environment.flagStateVersion])) as Record<string, number>;
  };
  const evaluated = async (publishableKey: string, query = "") =>
    (await request(server.url, "GET", `/features/evaluated?context.user.id=u1&context.company.id=c1${query}&publishableKey=${publishableKey}`)).body.features;
  const switchyard = (args: string[]) => switchyardCli(server, args);

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken);
    await admin("PUT", `/admin/apps/${keys.app.id}/features/huddle`, { name: "Huddle rooms" });
    await admin("PUT", `/admin/apps/${keys.app.id}/features/export`, {});
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("starts every app with In development, Internal, Beta and General availability", async () => {
    const reply = await admin("GET", `/admin/apps/${keys.app.id}/stages`);
    expect(reply.status).toBe(200);
    expect(reply.body.stages.map((stage: { name: string; order: number }) => [stage.name, stage.order])).toEqual([
      ["In development", 1],
      ["Internal", 2],
      ["Beta", 3],
      ["General availability", 4],
    ]);
    const beta = reply.body.stages[2];
    expect(beta.targeting).toEqual({ [keys.production.id]: { rules: [] }, [keys.development.id]: { rules: EVERYONE } });
    expect(reply.body.stages[3].targeting[keys.production.id]).toEqual({ rules: EVERYONE });
  });

  it("puts a feature in a stage: new targeting in every environment, one audit entry, one bump per environment", async () => {
    const before = await versions();
    const auditBefore = (await admin("GET", "/admin/audit?limit=1000")).body.entries.length;
    const reply = await admin("PUT", `/admin/apps/${keys.app.id}/features/huddle/stage`, { stage: "Beta" });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.feature).toMatchObject({ key: "huddle", stage: "Beta", stageId: "st_beta" });
    const after = await versions();
    for (const id of Object.keys(before)) expect(after[id], id).toBe(before[id]! + 1);
    const entries = (await admin("GET", "/admin/audit?limit=1000&order=oldest")).body.entries;
    expect(entries).toHaveLength(auditBefore + 1);
    const entry = entries.at(-1);
    expect(entry).toMatchObject({ action: "feature.stage", entity: { kind: "feature", key: "huddle" }, details: { stage: { from: null, to: "Beta" } } });
    for (const environment of [keys.production, keys.development]) {
      const history = (await admin("GET", `/admin/environments/${environment.id}/features/huddle/history`)).body.versions;
      expect(history.at(-1)).toMatchObject({ kind: "targeting", version: 1, auditCursor: entry.cursor });
    }
    expect((await admin("GET", `/admin/environments/${keys.development.id}/features/huddle`)).body.targeting).toEqual({ version: 1, rules: EVERYONE });
    expect((await evaluated(keys.development.publishableKey)).huddle).toMatchObject({ isEnabled: true, stage: "Beta" });
    expect((await evaluated(keys.production.publishableKey)).huddle).toMatchObject({ isEnabled: false, stage: "Beta" });
  });

  it("edits a stage's rules, and re-applies them to its features only when asked", async () => {
    const path = `/admin/apps/${keys.app.id}/stages/st_beta`;
    const targeting = { [keys.production.id]: { rules: BETA_COMPANIES }, [keys.development.id]: { rules: EVERYONE } };
    const edited = await admin("PATCH", path, { targeting });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.reapplied).toEqual([]);
    expect((await admin("GET", `/admin/environments/${keys.production.id}/features/huddle`)).body.targeting.version).toBe(1);
    const before = await versions();
    const reapplied = await admin("PATCH", path, { reapply: true });
    expect(reapplied.body.reapplied).toEqual([
      {
        key: "huddle",
        stage: "Beta",
        stageId: "st_beta",
        environments: expect.arrayContaining([expect.objectContaining({ environmentId: keys.production.id, version: 2 })]),
      },
    ]);
    const after = await versions();
    for (const id of Object.keys(before)) expect(after[id], id).toBe(before[id]! + 1);
    expect((await admin("GET", `/admin/environments/${keys.production.id}/features/huddle`)).body.targeting).toEqual({ version: 2, rules: BETA_COMPANIES });
    expect((await evaluated(keys.production.publishableKey, "&context.company.plan=beta")).huddle.isEnabled).toBe(true);
    expect((await evaluated(keys.production.publishableKey, "&context.company.plan=free")).huddle.isEnabled).toBe(false);
  });

  it("renames a stage: its features carry the new name", async () => {
    const renamed = await admin("PATCH", `/admin/apps/${keys.app.id}/stages/Beta`, { name: "Public beta" });
    expect(renamed.body.stage).toMatchObject({ id: "st_beta", name: "Public beta", features: ["huddle"] });
    expect((await evaluated(keys.development.publishableKey)).huddle.stage).toBe("Public beta");
    const flags = await request(server.url, "GET", `/api/apps/${keys.app.id}/features?envId=${keys.production.id}`, { token: server.adminToken });
    expect(flags.body.data.find((flag: { key: string }) => flag.key === "huddle").stage).toEqual({ id: "st_beta", name: "Public beta", order: 3 });
    // Sorted by stage order, unstaged flags last.
    await admin("PUT", `/admin/apps/${keys.app.id}/features/unstaged`, {});
    const byStage = await request(server.url, "GET", `/api/apps/${keys.app.id}/features?envId=${keys.production.id}&sortBy=stage`, { token: server.adminToken });
    expect(byStage.body.data.map((flag: { key: string }) => flag.key)).toEqual(["huddle", "export", "unstaged"]);
    const byStageDesc = await request(server.url, "GET", `/api/apps/${keys.app.id}/features?envId=${keys.production.id}&sortBy=stage&sortOrder=desc`, { token: server.adminToken });
    expect(byStageDesc.body.data.map((flag: { key: string }) => flag.key)).toEqual(["unstaged", "export", "huddle"]);
    // The Reflag CLI prints it in its flag list.
    const project = reflagProject(server.url, keys.app.id);
    try {
      const listed = await runReflag(project, server.adminToken, ["flags", "list"]);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toMatch(/Huddle rooms.*huddle.*Public beta/);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it("lists a feature's release stage by id; a stage given by name is that release stage, and an unknown name is refused", async () => {
    const listed = await admin("GET", `/admin/apps/${keys.app.id}/features`);
    expect(listed.body.features.find((feature: { key: string }) => feature.key === "huddle")).toMatchObject({ stage: "Public beta", stageId: "st_beta" });
    await admin("PUT", `/admin/apps/${keys.app.id}/features/spare`, {});
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/spare/stage`, { stage: "Internal" })).body.feature.stageId).toBe("st_internal");
    // The README's walk-through writes "beta": the feature goes into the release stage of that name (case-insensitive).
    const named = await admin("PUT", `/admin/apps/${keys.app.id}/features/spare`, { stage: "in development" });
    expect(named.body.feature).toMatchObject({ stage: "In development", stageId: "st_in_development" });
    const stages = (await admin("GET", `/admin/apps/${keys.app.id}/stages`)).body.stages;
    expect(stages.find((stage: { id: string }) => stage.id === "st_in_development").features).toContain("spare");
    expect(stages.find((stage: { id: string }) => stage.id === "st_internal").features).not.toContain("spare");
    const refused = await admin("PUT", `/admin/apps/${keys.app.id}/features/spare`, { stage: "someday" });
    expect(refused.status).toBe(400);
    expect(refused.body.error.validationErrors[0]).toMatchObject({ path: "stage", message: expect.stringContaining("In development, Internal, Public beta, General availability") });
    const cleared = await admin("PUT", `/admin/apps/${keys.app.id}/features/spare`, { stage: null });
    expect(cleared.body.feature).toMatchObject({ stage: null, stageId: null });
  });

  it("creates, refuses and deletes stages", async () => {
    const base = `/admin/apps/${keys.app.id}/stages`;
    const created = await admin("POST", base, { name: "Dogfood", order: 2, targeting: { [keys.production.id]: { rules: BETA_COMPANIES } } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.stage).toMatchObject({ name: "Dogfood", order: 2, features: [] });
    expect(created.body.stage.id).toMatch(/^st_[0-9A-Za-z]{10}$/);
    expect((await admin("POST", base, { name: "Dogfood" })).status).toBe(409);
    const foreign = await admin("POST", base, { name: "X", targeting: { env_nope: { rules: [] } } });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.validationErrors[0].path).toBe("targeting.env_nope");
    const badRules = await admin("POST", base, { name: "Y", targeting: { [keys.production.id]: { rules: [{ filter: { type: "nope" } }] } } });
    expect(badRules.status).toBe(400);
    expect(badRules.body.error.validationErrors[0].path).toBe(`targeting.${keys.production.id}.rules.0.filter.type`);
    expect((await admin("POST", base, { name: "" })).body.error.validationErrors[0].path).toBe("name");
    expect((await admin("DELETE", `${base}/st_beta`)).status).toBe(409);
    expect((await admin("DELETE", `${base}/${created.body.stage.id}`)).status).toBe(200);
    expect((await admin("DELETE", `${base}/${created.body.stage.id}`)).status).toBe(404);
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/nope/stage`, { stage: "Internal" })).status).toBe(404);
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/export/stage`, { stage: "Nope" })).status).toBe(404);
  });

  it("lets editors stage features and refuses read-only tokens", async () => {
    await createMember(server.url, server.adminToken, "viewer@example.com", "editor");
    const session = await signIn(server.url, "viewer@example.com");
    const readOnly = await createToken(server.url, session, "ro", true);
    const refused = await request(server.url, "PUT", `/admin/apps/${keys.app.id}/features/export/stage`, { token: readOnly.secret, body: { stage: "Internal" } });
    expect(refused.status).toBe(403);
    const full = await createToken(server.url, session, "full");
    const allowed = await request(server.url, "PUT", `/admin/apps/${keys.app.id}/features/export/stage`, { token: full.secret, body: { stage: "Internal" } });
    expect(allowed.status).toBe(200);
  });

  it("announces a stage change on the live stream once per environment", async () => {
    const stream = await openSse(`${server.url}/sse/server`, { authorization: `Bearer ${keys.production.secretKey}` });
    try {
      const before = (await versions())[keys.production.id]!;
      expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/unstaged/stage`, { stage: "In development" })).status).toBe(200);
      await stream.waitFor((connection) => connection.versions().includes(before + 1));
      // A later, unrelated write: once its version arrives, everything in between has too.
      await admin("PUT", `/admin/environments/${keys.production.id}/features/unstaged/config`, { variants: [] });
      await stream.waitFor((connection) => connection.versions().includes(before + 2));
      expect(stream.versions().filter((version) => version > before)).toEqual([before + 1, before + 2]);
    } finally {
      stream.close();
    }
  });

  it("does all of it from the switchyard CLI", async () => {
    const list = await switchyard(["stages", "list", keys.app.id]);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).stages.map((stage: { name: string }) => stage.name)).toContain("Public beta");
    const staged = await switchyard(["features", "stage", keys.app.id, "export", "General availability"]);
    expect(staged.code, staged.stderr).toBe(0);
    expect(JSON.parse(staged.stdout).feature).toMatchObject({ key: "export", stage: "General availability" });
    expect((await evaluated(keys.production.publishableKey)).export.isEnabled).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), "switchyard-stage-"));
    const file = join(dir, "targeting.json");
    writeFileSync(file, JSON.stringify({ [keys.production.id]: { rules: BETA_COMPANIES }, [keys.development.id]: { rules: EVERYONE } }));
    const updated = await switchyard(["stages", "update", keys.app.id, "General availability", "--targeting", file, "--reapply"]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout).reapplied.map((feature: { key: string }) => feature.key)).toEqual(["export"]);
    expect((await evaluated(keys.production.publishableKey)).export.isEnabled).toBe(false);
    const created = await switchyard(["stages", "create", keys.app.id, "Sunset", "--order", "9"]);
    expect(JSON.parse(created.stdout).stage).toMatchObject({ name: "Sunset", order: 9 });
    const removed = await switchyard(["stages", "delete", keys.app.id, "Sunset"]);
    expect(removed.code, removed.stderr).toBe(0);
  });
});
