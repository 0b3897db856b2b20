/** `POST /flags/opt-in` (API.md §5) and `POST /feedback/prompting-init` over a real server. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";
import { openSse } from "../support/sse.js";

describe("opt-in", () => {
  let server: TestServer;
  let appId: string;
  let publishableKey: string;
  let secretKey: string;

  beforeAll(async () => {
    server = await startServer();
    const { app, production } = await createApp(server.url, server.adminToken);
    appId = app.id;
    publishableKey = production.publishableKey;
    secretKey = production.secretKey;
    const optable = await request(server.url, "PUT", `/admin/apps/${appId}/features/beta-editor`, { token: server.adminToken, body: { optInEnabled: true } });
    expect(optable.body.feature).toMatchObject({ key: "beta-editor" });
    await request(server.url, "PUT", `/admin/apps/${appId}/features/closed`, { token: server.adminToken, body: {} });
  });
  afterAll(async () => {
    await server.stop();
  });

  const optIn = (body: unknown, token = publishableKey) => request(server.url, "POST", "/flags/opt-in", { token, body });
  const currentVersion = async () => (await request(server.url, "GET", "/features", { token: secretKey })).body.flagStateVersion as number;

  it("stores a choice, bumps flagStateVersion once per change and announces it on the live stream", async () => {
    const stream = await openSse(`${server.url}/sse/server`, { authorization: `Bearer ${secretKey}` });
    try {
      const before = await currentVersion();
      const reply = await optIn({ key: "beta-editor", optedIn: true, scope: "user", context: { user: { id: "u-1", name: "Ann" }, company: { id: "c-1" } } });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ success: true, flagStateVersion: before + 1 });
      expect(await currentVersion()).toBe(before + 1);
      await stream.waitFor((c) => c.versions().includes(before + 1));

      // The same choice again changes nothing: same version, no event.
      const repeated = await optIn({ key: "beta-editor", optedIn: true, scope: "user", context: { user: { id: "u-1" } } });
      expect(repeated.body).toEqual({ success: true, flagStateVersion: before + 1 });

      // Company scope, with a numeric id (the node SDKs pass numbers through), and a secret key.
      const company = await optIn({ key: "beta-editor", optedIn: true, scope: "company", context: { user: { id: "u-1" }, company: { id: 42 } } }, secretKey);
      expect(company.body.flagStateVersion).toBe(before + 2);
      const optedOut = await optIn({ key: "beta-editor", optedIn: false, scope: "user", context: { user: { id: "u-1" } } });
      expect(optedOut.body.flagStateVersion).toBe(before + 3);
      await stream.waitFor((c) => c.versions().includes(before + 3));
      expect(stream.versions().filter((version) => version > before)).toEqual([before + 1, before + 2, before + 3]);
    } finally {
      stream.close();
    }
  });

  it("answers 404 for a feature that does not exist or does not allow opt-in", async () => {
    for (const key of ["nope", "closed"]) {
      const reply = await optIn({ key, optedIn: true, scope: "user", context: { user: { id: "u-1" } } });
      expect(reply.status, key).toBe(404);
      expect(reply.body.error.code).toBe("NOT_FOUND");
    }
    // Turning opt-in off on the feature closes it again.
    await request(server.url, "PUT", `/admin/apps/${appId}/features/beta-editor`, { token: server.adminToken, body: { optInEnabled: false } });
    const closed = await optIn({ key: "beta-editor", optedIn: true, scope: "user", context: { user: { id: "u-2" } } });
    expect(closed.status).toBe(404);
    await request(server.url, "PUT", `/admin/apps/${appId}/features/beta-editor`, { token: server.adminToken, body: { optInEnabled: true } });
  });

  it("validates the body with the error envelope", async () => {
    const cases: [unknown, string][] = [
      [{ key: "beta-editor", optedIn: true, scope: "company", context: { user: { id: "u-1" } } }, "context.company.id"],
      [{ key: "beta-editor", optedIn: true, scope: "user", context: {} }, "context.user.id"],
      [{ key: "beta-editor", optedIn: true, scope: "user" }, "context.user.id"],
      [{ key: "beta-editor", optedIn: "yes", scope: "user", context: { user: { id: "u" } } }, "optedIn"],
      [{ key: "beta-editor", optedIn: true, scope: "team", context: { user: { id: "u" } } }, "scope"],
      [{ key: "", optedIn: true, context: { user: { id: "u" } } }, "key"],
      [{ key: "beta-editor", optedIn: true, context: { user: { id: "" } } }, "context.user.id"],
      [{ key: "beta-editor", optedIn: true, context: { user: { id: "a\u0000b" } } }, "context.user.id"],
      [{ key: "beta-editor", optedIn: true, context: { user: "u-1" } }, "context.user"],
    ];
    for (const [body, path] of cases) {
      const reply = await optIn(body);
      expect(reply.status, JSON.stringify(body)).toBe(400);
      expect(reply.body.error.code).toBe("INVALID_BODY");
      expect(reply.body.error.validationErrors.map((issue: { path: string }) => issue.path), JSON.stringify(body)).toContain(path);
    }
    const wrongType = await request(server.url, "POST", "/flags/opt-in", { token: publishableKey, rawBody: "{}", contentType: "text/plain" });
    expect(wrongType.body.error.code).toBe("UNSUPPORTED_CONTENT_TYPE");
    const malformed = await request(server.url, "POST", "/flags/opt-in", { token: publishableKey, rawBody: "{", contentType: "application/json" });
    expect(malformed.body.error.code).toBe("MALFORMED_JSON");
    const tooLarge = await request(server.url, "POST", "/flags/opt-in", {
      token: publishableKey,
      body: { key: "beta-editor", optedIn: true, context: { user: { id: "u" }, other: { blob: "x".repeat(65_536) } } },
    });
    expect(tooLarge.status).toBe(413);
  });

  it("needs a publishable or secret key", async () => {
    const body = { key: "beta-editor", optedIn: true, context: { user: { id: "u-9" } } };
    expect((await request(server.url, "POST", "/flags/opt-in", { body })).status).toBe(401);
    expect((await request(server.url, "POST", "/flags/opt-in", { body, token: server.adminToken })).status).toBe(403);
    const other = await createApp(server.url, server.adminToken, "Other");
    // Another app's key does not reach this app's features.
    expect((await request(server.url, "POST", "/flags/opt-in", { body, token: other.production.publishableKey })).status).toBe(404);
  });
});

describe("feedback prompting", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("prompting-init answers {success: false} with 200: live prompting is not offered", async () => {
    const { production } = await createApp(server.url, server.adminToken);
    const reply = await request(server.url, "POST", "/feedback/prompting-init", { token: production.publishableKey, body: { userId: "u-1" } });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ success: false });
    expect(reply.headers.get("content-type")).toBe("application/json");
    expect((await request(server.url, "POST", "/feedback/prompting-init", { body: { userId: "u-1" } })).status).toBe(401);
    const malformed = await request(server.url, "POST", "/feedback/prompting-init", { token: production.publishableKey, rawBody: "{", contentType: "application/json" });
    expect(malformed.status).toBe(400);
  });
});
