import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";

const TARGETING = {
  rules: [
    { filter: { type: "context", field: "company.plan", operator: "IS", values: ["enterprise"] } },
    { filter: { type: "rolloutPercentage", key: "huddle", partialRolloutAttribute: "company.id", partialRolloutThreshold: 50000 } },
  ],
};

describe("management API", () => {
  let server: TestServer;
  let admin: string;
  beforeAll(async () => {
    server = await startServer();
    admin = server.adminToken;
  });
  afterAll(async () => {
    await server.stop();
  });

  it("answers /health without a key", async () => {
    const reply = await request(server.url, "GET", "/health");
    expect(reply.status).toBe(200);
    // With how far the projection of tracking is behind its log: nothing tracked yet, so nothing behind.
    expect(reply.body).toEqual({ success: true, projection: { lagMs: 0, backlog: 0 } });
  });

  it("creates an app with two environments and keys of the contract's shape", async () => {
    const { app, production, development } = await createApp(server.url, admin, "Acme");
    expect(app.id).toMatch(/^app_/);
    expect(app.trackingKey).toMatch(/^trk_[A-Za-z0-9]{32}$/);
    expect(app.defaultEnvironmentId).toBe(production.id);
    expect(production.publishableKey).toMatch(/^pub_production_[A-Za-z0-9]{32}$/);
    expect(production.secretKey).toMatch(/^sec_production_[A-Za-z0-9]{32}$/);
    expect(development.secretKey.length).toBeGreaterThan(32);

    const listed = await request(server.url, "GET", "/admin/apps", { token: admin });
    const found = listed.body.apps.find((candidate: { id: string }) => candidate.id === app.id);
    expect(found.name).toBe("Acme");
    // Keys never appear in clear after creation.
    expect(JSON.stringify(listed.body)).not.toContain(production.secretKey);
    expect(found.environments.map((environment: { name: string }) => environment.name)).toEqual(["production", "development"]);

    const shown = await request(server.url, "GET", `/admin/apps/${app.id}`, { token: admin });
    expect(shown.body.app.trackingKey).not.toBe(app.trackingKey);
    expect(shown.body.app.trackingKey).toMatch(/^trk_…/);
  });

  it("adds environments and 404s for an unknown app", async () => {
    const { app } = await createApp(server.url, admin);
    const created = await request(server.url, "POST", `/admin/apps/${app.id}/environments`, { token: admin, body: { name: "staging" } });
    expect(created.status).toBe(200);
    expect(created.body.environment).toMatchObject({ name: "staging" });
    expect(created.body.environment.publishableKey).toMatch(/^pub_staging_/);
    const missing = await request(server.url, "POST", "/admin/apps/app_nope/environments", { token: admin, body: { name: "x" } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("NOT_FOUND");
  });

  it("rotating a key revokes the old one at once", async () => {
    const { production } = await createApp(server.url, admin);
    const before = await request(server.url, "GET", "/features", { token: production.secretKey });
    expect(before.status).toBe(200);
    const rotated = await request(server.url, "POST", `/admin/environments/${production.id}/keys/rotate`, { token: admin, body: { kind: "secret" } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.key).toMatch(/^sec_production_/);
    expect((await request(server.url, "GET", "/features", { token: production.secretKey })).status).toBe(401);
    expect((await request(server.url, "GET", "/features", { token: rotated.body.key })).status).toBe(200);
    // A publishable key answered from the index of presented publishable keys is revoked at once as well.
    expect((await request(server.url, "GET", "/features/evaluated", { token: production.publishableKey })).status).toBe(200);
    const rotatedPublishable = await request(server.url, "POST", `/admin/environments/${production.id}/keys/rotate`, { token: admin, body: { kind: "publishable" } });
    expect(rotatedPublishable.status).toBe(200);
    expect((await request(server.url, "GET", "/features/evaluated", { token: production.publishableKey })).status).toBe(401);
    expect((await request(server.url, "GET", "/features/evaluated", { token: rotatedPublishable.body.key })).status).toBe(200);
    const badKind = await request(server.url, "POST", `/admin/environments/${production.id}/keys/rotate`, { token: admin, body: { kind: "tracking" } });
    expect(badKind.status).toBe(400);
    expect(badKind.body.error.validationErrors[0].path).toBe("kind");
  });

  it("creates, updates and archives features, bumping flagStateVersion in every environment", async () => {
    const { app, production, development } = await createApp(server.url, admin);
    const created = await request(server.url, "PUT", `/admin/apps/${app.id}/features/huddle`, {
      token: admin,
      body: { description: "Huddles", stage: "beta" },
    });
    expect(created.status).toBe(200);
    // A stage given by name is the app's release stage of that name (API.md §6).
    expect(created.body.feature).toMatchObject({ key: "huddle", description: "Huddles", stage: "Beta", stageId: "st_beta", link: null });
    expect(created.body.feature.id.length).toBeLessThanOrEqual(14);
    const updated = await request(server.url, "PUT", `/admin/apps/${app.id}/features/huddle`, { token: admin, body: { link: "https://x.test" } });
    expect(updated.body.feature).toMatchObject({ id: created.body.feature.id, description: "Huddles", link: "https://x.test", createdAt: created.body.feature.createdAt });

    const rules = await request(server.url, "GET", "/features", { token: production.secretKey });
    expect(rules.body.flagStateVersion).toBe(2);
    expect(rules.body.features).toEqual([
      expect.objectContaining({ key: "huddle", targeting: { version: 0, rules: [] }, config: { version: 0, variants: [] } }),
    ]);
    const list = await request(server.url, "GET", `/admin/apps/${app.id}/features`, { token: admin });
    expect(list.body.features.map((feature: { key: string }) => feature.key)).toEqual(["huddle"]);

    const archived = await request(server.url, "DELETE", `/admin/apps/${app.id}/features/huddle`, { token: admin });
    expect(archived.status).toBe(200);
    const afterArchive = await request(server.url, "GET", "/features", { token: development.secretKey });
    expect(afterArchive.body.features).toEqual([]);
    expect(afterArchive.body.flagStateVersion).toBe(3);
    expect((await request(server.url, "DELETE", `/admin/apps/${app.id}/features/huddle`, { token: admin })).status).toBe(404);
  });

  it("versions targeting and config per environment and keeps every version", async () => {
    const { app, production, development } = await createApp(server.url, admin);
    await request(server.url, "PUT", `/admin/apps/${app.id}/features/huddle`, { token: admin, body: {} });
    const first = await request(server.url, "PUT", `/admin/environments/${production.id}/features/huddle/targeting`, { token: admin, body: TARGETING });
    expect(first.status).toBe(200);
    expect(first.body.targeting).toEqual({ version: 1, rules: TARGETING.rules });
    const second = await request(server.url, "PUT", `/admin/environments/${production.id}/features/huddle/targeting`, {
      token: admin,
      body: { rules: [] },
    });
    expect(second.body.targeting.version).toBe(2);
    expect(second.body.flagStateVersion).toBe(first.body.flagStateVersion + 1);
    const config = await request(server.url, "PUT", `/admin/environments/${production.id}/features/huddle/config`, {
      token: admin,
      body: { variants: [{ filter: { type: "constant", value: true }, key: "blue", payload: { color: "#00f" } }] },
    });
    expect(config.body.config).toEqual({ version: 1, variants: [{ filter: { type: "constant", value: true }, key: "blue", payload: { color: "#00f" } }] });

    const history = await request(server.url, "GET", `/admin/environments/${production.id}/features/huddle/history`, { token: admin });
    expect(history.body.versions.map((entry: { kind: string; version: number }) => `${entry.kind}@${entry.version}`)).toEqual([
      "config@1",
      "targeting@1",
      "targeting@2",
    ]);
    expect(history.body.versions[1].rules).toEqual(TARGETING.rules);

    // The other environment is untouched.
    const untouched = await request(server.url, "GET", "/features", { token: development.secretKey });
    expect(untouched.body.features[0].targeting).toEqual({ version: 0, rules: [] });
    const unknownFeature = await request(server.url, "PUT", `/admin/environments/${production.id}/features/nope/targeting`, { token: admin, body: { rules: [] } });
    expect(unknownFeature.status).toBe(404);
  });

  it("rejects invalid rule trees with paths and changes nothing", async () => {
    const { app, production } = await createApp(server.url, admin);
    await request(server.url, "PUT", `/admin/apps/${app.id}/features/f`, { token: admin, body: {} });
    const cases: [unknown, string][] = [
      [{ rules: [{ filter: { type: "bogus" } }] }, "rules.0.filter.type"],
      [{ rules: [{ filter: { type: "context", field: "a", operator: "NOPE", values: ["x"] } }] }, "rules.0.filter.operator"],
      [{ rules: [{ filter: { type: "context", field: "a", operator: "IS" } }] }, "rules.0.filter.values"],
      [
        { rules: [{ filter: { type: "rolloutPercentage", key: "f", partialRolloutAttribute: "id", partialRolloutThreshold: 100001 } }] },
        "rules.0.filter.partialRolloutThreshold",
      ],
    ];
    for (const [body, path] of cases) {
      const reply = await request(server.url, "PUT", `/admin/environments/${production.id}/features/f/targeting`, { token: admin, body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe("INVALID_RULES");
      expect(reply.body.error.validationErrors.map((issue: { path: string }) => issue.path)).toContain(path);
    }
    let deep: Record<string, unknown> = { type: "constant", value: true };
    for (let level = 0; level < 40; level++) deep = { type: "negation", filter: deep };
    const tooDeep = await request(server.url, "PUT", `/admin/environments/${production.id}/features/f/targeting`, { token: admin, body: { rules: [{ filter: deep }] } });
    expect(tooDeep.status).toBe(400);
    const rules = await request(server.url, "GET", "/features", { token: production.secretKey });
    expect(rules.body.features[0].targeting).toEqual({ version: 0, rules: [] });
  });

  it("answers every client mistake with the error envelope", async () => {
    const noToken = await request(server.url, "GET", "/admin/apps");
    expect(noToken.status).toBe(401);
    expect(noToken.body).toMatchObject({ success: false, error: { code: "UNAUTHORIZED" } });
    expect((await request(server.url, "GET", "/admin/apps", { token: "adm_wrong" })).status).toBe(401);
    const { production } = await createApp(server.url, admin);
    const keyOnAdmin = await request(server.url, "GET", "/admin/apps", { token: production.secretKey });
    expect(keyOnAdmin.status).toBe(403);
    expect(keyOnAdmin.body.error.code).toBe("FORBIDDEN");
    const adminOnFront = await request(server.url, "GET", "/features", { token: admin });
    expect(adminOnFront.status).toBe(403);
    const publishableOnSecret = await request(server.url, "GET", "/features", { token: production.publishableKey });
    expect(publishableOnSecret.status).toBe(403);

    const unknownRoute = await request(server.url, "GET", "/nope/nope/nope");
    expect(unknownRoute.status).toBe(404);
    expect(unknownRoute.body.error.code).toBe("ROUTE_NOT_FOUND");

    const wrongType = await request(server.url, "POST", "/admin/apps", { token: admin, rawBody: '{"name":"x"}', contentType: "text/plain" });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.code).toBe("UNSUPPORTED_CONTENT_TYPE");
    const malformed = await request(server.url, "POST", "/admin/apps", { token: admin, rawBody: '{"name":', contentType: "application/json; charset=utf-8" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe("MALFORMED_JSON");
    const missingName = await request(server.url, "POST", "/admin/apps", { token: admin, body: {} });
    expect(missingName.status).toBe(400);
    expect(missingName.body.error.validationErrors[0].path).toBe("name");
    const tooLarge = await request(server.url, "POST", "/admin/apps", { token: admin, rawBody: JSON.stringify({ name: "x".repeat(2 * 1024 * 1024) }), contentType: "application/json" });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error.code).toBe("PAYLOAD_TOO_LARGE");
    const deep = await request(server.url, "POST", "/admin/apps", { token: admin, rawBody: "[".repeat(10_000) + "]".repeat(10_000), contentType: "application/json" });
    expect(deep.status).toBe(400);
    const badEscape = await request(server.url, "GET", "/admin/apps/%E0%A4%A", { token: admin });
    expect(badEscape.status).toBe(400);

    // Still serving after all of that.
    expect((await request(server.url, "GET", "/health")).status).toBe(200);
  });

  it("answers CORS preflights on front-facing paths", async () => {
    const response = await fetch(`${server.url}/features/evaluated`, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(response.headers.get("access-control-allow-credentials")).toBe("true");
    expect(response.headers.get("access-control-allow-headers")).toContain("bucket-sdk-version");
    expect(await response.text()).toBe("");
  });
});

describe("restarts", () => {
  it("keeps apps, keys, features and versions across a restart on the same data dir, and exits 0 on SIGTERM", async () => {
    const first = await startServer({ keepData: true });
    const { app, production } = await createApp(first.url, first.adminToken);
    await request(first.url, "PUT", `/admin/apps/${app.id}/features/f`, { token: first.adminToken, body: { stage: "general availability" } });
    await request(first.url, "PUT", `/admin/environments/${production.id}/features/f/targeting`, {
      token: first.adminToken,
      body: { rules: [{ filter: { type: "constant", value: true } }] },
    });
    expect(await first.stop()).toBe(0);

    const second = await startServer({ dataDir: first.dataDir });
    try {
      const rules = await request(second.url, "GET", "/features", { token: production.secretKey });
      expect(rules.status).toBe(200);
      expect(rules.body.flagStateVersion).toBe(2);
      expect(rules.body.features[0]).toMatchObject({ key: "f", stage: "General availability", targeting: { version: 1 } });
      const shown = await request(second.url, "GET", `/admin/apps/${app.id}`, { token: second.adminToken });
      expect(shown.body.app.name).toBe("Test app");
    } finally {
      expect(await second.stop()).toBe(0);
    }
  });
});
