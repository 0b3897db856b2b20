/**
 * The published Reflag CLI (`@reflag/cli` 1.0.4, unmodified) against a real service on either twin: `apps list`,
 * `flags create | list | types` in a temporary project with `REFLAG_API_KEY` set to a Switchyard API token, and the
 * `/api` answers it reads (API.md §10).
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_TEST_ENV, createMember, createToken, signIn } from "../support/accounts.js";
import { createApp, request } from "../support/http.js";
import { reflagProject, runReflag, REFLAG_CLI } from "../support/reflag-cli.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

type Keys = Awaited<ReturnType<typeof createApp>>;

/** The CLI's own type generator: what it writes for a Reflag app whose flags are `flags`. */
async function reflagTypes(flags: unknown[], format: "react" | "node"): Promise<string> {
  const gen = (await import(join(REFLAG_CLI, "../utils/gen.js"))) as { genTypes(flags: unknown[], format: string): string };
  return gen.genTypes(flags, format);
}

describe(`Reflag CLI against Switchyard (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Keys;
  let token: string;
  let readOnlyToken: string;
  let project: string;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    server = await startServer({ env: ACCOUNT_TEST_ENV });
    keys = await createApp(server.url, server.adminToken, "Acme web");
    await createMember(server.url, server.adminToken, "dev@example.com", "editor");
    const session = await signIn(server.url, "dev@example.com");
    token = (await createToken(server.url, session, "reflag cli")).secret;
    readOnlyToken = (await createToken(server.url, session, "reflag cli read-only", true)).secret;
    const appId = keys.app.id;
    // Flags with and without remote configs; the development environment's config must not leak into the types.
    expect((await admin("PUT", `/admin/apps/${appId}/features/huddle`, { name: "Huddle rooms" })).status).toBe(200);
    expect((await admin("PUT", `/admin/apps/${appId}/features/dark-mode`, {})).status).toBe(200);
    expect((await admin("PUT", `/admin/apps/${appId}/features/ai_assist`, { name: "AI assist", description: "Ask the model" })).status).toBe(200);
    const variants = [
      { key: "pro", payload: { maxParticipants: 50, tier: "pro", regions: ["eu", "us"] }, filter: { type: "constant", value: true } },
      { key: "free", payload: { maxParticipants: 3, tier: "free", regions: [] }, filter: { type: "constant", value: false } },
    ];
    expect((await admin("PUT", `/admin/environments/${keys.production.id}/features/huddle/config`, { variants })).status).toBe(200);
    const devOnly = [{ key: "x", payload: { devOnly: 1 }, filter: { type: "constant", value: true } }];
    expect((await admin("PUT", `/admin/environments/${keys.development.id}/features/dark-mode/config`, { variants: devOnly })).status).toBe(200);
    project = reflagProject(server.url, appId);
  });

  afterAll(async () => {
    await server?.stop();
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it("makes app ids of 14 characters, the only length the CLI's config accepts", () => {
    expect(keys.app.id).toHaveLength(14);
  });

  it("answers GET /api/bootstrap with the org, its apps and their environments", async () => {
    const reply = await request(server.url, "GET", "/api/bootstrap", { token });
    expect(reply.status).toBe(200);
    expect(reply.body.user).toMatchObject({ email: "dev@example.com" });
    expect(reply.body.org).toMatchObject({ featureKeyFormat: "custom" });
    const app = reply.body.org.apps.find((candidate: { id: string }) => candidate.id === keys.app.id);
    expect(app).toEqual({
      id: keys.app.id,
      name: "Acme web",
      demo: false,
      environments: [
        { id: keys.production.id, name: "production", isProduction: true, order: expect.any(Number) },
        { id: keys.development.id, name: "development", isProduction: false, order: expect.any(Number) },
      ].sort((a, b) => keys.app.environments.findIndex((e) => e.id === a.id) - keys.app.environments.findIndex((e) => e.id === b.id)),
    });
  });

  it("lists the apps (reflag apps list)", async () => {
    const run = await runReflag(project, token, ["apps", "list"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(keys.app.id);
    expect(run.stdout).toContain("Acme web");
  });

  it("creates a flag by name and key (reflag flags create), audited as the token", async () => {
    const run = await runReflag(project, token, ["flags", "create", "Smart summaries", "--key", "smart-summaries"]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    // ora writes its spinner lines to stderr.
    expect(run.stderr).toContain("Created flag Smart summaries with key smart-summaries");
    const features = await admin("GET", `/admin/apps/${keys.app.id}/features`);
    // Like a Reflag flag, it starts in the app's first release stage (its rules untouched: it serves no one yet).
    expect(features.body.features.find((feature: { key: string }) => feature.key === "smart-summaries")).toMatchObject({ name: "Smart summaries", stage: "In development", stageId: "st_in_development" });
    expect((await admin("GET", `/admin/environments/${keys.development.id}/features/smart-summaries`)).body.targeting).toMatchObject({ version: 0, rules: [] });
    const audit = await admin("GET", "/admin/audit?entity=feature&limit=1000");
    const entry = audit.body.entries.find((candidate: { entity: { key?: string } }) => candidate.entity.key === "smart-summaries");
    expect(entry).toMatchObject({ action: "feature.create", actor: { kind: "token", email: "dev@example.com" } });
  });

  it("refuses to create a flag whose key exists, and a read-only token", async () => {
    const again = await runReflag(project, token, ["flags", "create", "Again", "--key", "smart-summaries"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("exists");
    const readOnly = await runReflag(project, readOnlyToken, ["flags", "create", "Nope", "--key", "nope"]);
    expect(readOnly.code).toBe(1);
    expect(readOnly.stderr).toContain("read-only token cannot");
    const unknown = await runReflag(project, "sya_not_a_real_token_0123456789abcdefghij", ["flags", "list"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("API key is not valid");
  });

  it("lists flags with names and keys (reflag flags list)", async () => {
    const run = await runReflag(project, readOnlyToken, ["flags", "list"]);
    expect(run.code, run.stderr).toBe(0);
    for (const text of ["Huddle rooms", "huddle", "dark-mode", "AI assist", "ai_assist", "Smart summaries", "smart-summaries"]) expect(run.stdout).toContain(text);
    // A flag made by the CLI is in a stage, whose name the table shows.
    expect(run.stdout.split("\n").find((line) => line.includes("smart-summaries"))).toContain("In development");
  });

  it("generates the TypeScript the CLI generates for a Reflag app with the same flags and remote configs", async () => {
    const run = await runReflag(project, token, ["flags", "types"]);
    expect(run.code, run.stderr).toBe(0);
    const generated = readFileSync(join(project, "gen/flags.d.ts"), "utf8");
    // The same flags as a Reflag app lists them: by key, production's remote config only.
    const reflagFlags = [
      { id: "1", key: "ai_assist", name: "AI assist", description: "Ask the model", stage: null, remoteConfigs: [] },
      { id: "2", key: "dark-mode", name: "dark-mode", description: null, stage: null, remoteConfigs: [] },
      {
        id: "3",
        key: "huddle",
        name: "Huddle rooms",
        description: null,
        stage: null,
        remoteConfigs: [
          {
            variants: [
              { variant: { key: "pro", payload: { maxParticipants: 50, tier: "pro", regions: ["eu", "us"] } } },
              { variant: { key: "free", payload: { maxParticipants: 3, tier: "free", regions: [] } } },
            ],
          },
        ],
      },
      { id: "4", key: "smart-summaries", name: "Smart summaries", description: null, stage: { id: "st_in_development", name: "In development", order: 1 }, remoteConfigs: [] },
    ];
    expect(generated).toBe(await reflagTypes(reflagFlags, "react"));
    expect(generated).toContain("HuddleRoomsConfigPayload");
    const node = await runReflag(project, token, ["flags", "types", "--out", "gen/node-flags.d.ts", "--format", "node"]);
    expect(node.code, node.stderr).toBe(0);
    expect(readFileSync(join(project, "gen/node-flags.d.ts"), "utf8")).toBe(await reflagTypes(reflagFlags, "node"));
  });

  it("sorts and pages GET /api/apps/:appId/features, and names bad parameters", async () => {
    const base = `/api/apps/${keys.app.id}/features?envId=${keys.production.id}`;
    const byName = await request(server.url, "GET", `${base}&sortBy=name&sortOrder=desc`, { token });
    expect(byName.status).toBe(200);
    expect(byName.body.data.map((flag: { name: string }) => flag.name)).toEqual(["dark-mode", "Smart summaries", "Huddle rooms", "AI assist"]);
    expect(byName.body).toMatchObject({ totalCount: 4, sortBy: "name", sortOrder: "desc", pageIndex: 0 });
    const page = await request(server.url, "GET", `${base}&pageSize=1&pageIndex=2`, { token });
    expect(page.body.data.map((flag: { key: string }) => flag.key)).toEqual(["huddle"]);
    expect(page.body.data[0].remoteConfigs).toEqual([]);
    const missing = await request(server.url, "GET", `/api/apps/${keys.app.id}/features`, { token });
    expect(missing.status).toBe(400);
    expect(missing.body.error.validationErrors[0].path).toBe("envId");
    const badSort = await request(server.url, "GET", `${base}&sortBy=color`, { token });
    expect(badSort.status).toBe(400);
    expect(badSort.body.error.validationErrors[0].path).toBe("sortBy");
    const otherApp = await createApp(server.url, server.adminToken, "Other");
    const foreignEnv = await request(server.url, "GET", `/api/apps/${keys.app.id}/features?envId=${otherApp.production.id}`, { token });
    expect(foreignEnv.status).toBe(404);
    const noApp = await request(server.url, "GET", `/api/apps/app_nope/features?envId=${keys.production.id}`, { token });
    expect(noApp.status).toBe(404);
    const badBody = await request(server.url, "POST", `/api/apps/${keys.app.id}/features`, { token, body: { key: "k" } });
    expect(badBody.status).toBe(400);
    expect(badBody.body.error.validationErrors[0].path).toBe("name");
  });

  it("needs a management credential: none is a 401, an environment key a 403, and /api/mcp is left to its own route", async () => {
    expect((await request(server.url, "GET", "/api/bootstrap")).status).toBe(401);
    expect((await request(server.url, "GET", "/api/bootstrap", { token: keys.production.secretKey })).status).toBe(403);
    expect((await request(server.url, "GET", "/api/bootstrap", { token: server.adminToken })).status).toBe(200);
    const mcp = await request(server.url, "POST", "/api/mcp", { token, body: {} });
    expect(mcp.body.error?.code).not.toBe("INVALID_QUERY");
  });
});
