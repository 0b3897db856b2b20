/**
 * The Unleash importer facing a server that misbehaves (API.md §13.3): a 5xx, a redirect, an answer that is not JSON
 * or not Unleash's shape, and one that takes over 10 s are 502 `UPSTREAM_UNAVAILABLE` (the shape's path named), a
 * refused token is a 400 at `token`, and nothing is imported. The misbehaving server is a plain node:http one on
 * 127.0.0.1 that answers the calls the importer makes; the token never reaches the audit log.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";

type Behaviour = "ok" | "5xx" | "redirect" | "html" | "wrong-shape" | "slow" | "refused" | "lone-surrogate";

describe("Unleash importer against a misbehaving server", () => {
  let server: TestServer;
  let fake: Server;
  let fakeUrl: string;
  let app: Awaited<ReturnType<typeof createApp>>;
  /** What the fake does on the segments call (the last one the importer makes); the others answer well. */
  let behaviour: Behaviour = "ok";
  const seenAuthorization: string[] = [];

  beforeAll(async () => {
    fake = createServer((incoming, response) => {
      seenAuthorization.push(String(incoming.headers.authorization));
      const json = (status: number, body: unknown) => response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (behaviour === "refused") return json(401, { message: "no" });
      const path = incoming.url ?? "";
      if (path === "/api/admin/environments") return json(200, { environments: [{ name: "production" }] });
      if (path === "/api/admin/projects") return json(200, { projects: [{ id: "default" }] });
      if (path === "/api/admin/projects/default/features") return json(200, { features: [{ name: "one" }] });
      if (path.startsWith("/api/admin/projects/default/features/one")) {
        // An emoji cut in half in Unleash's description: JSON.stringify sends it as the escape "\ud83d".
        const description = behaviour === "lone-surrogate" ? "Rooms \ud83d" : undefined;
        return json(200, { name: "one", ...(description !== undefined ? { description } : {}), environments: [{ name: "production", enabled: true, strategies: [] }] });
      }
      if (path !== "/api/admin/segments") return json(404, {});
      switch (behaviour) {
        case "5xx":
          return json(503, { message: "down" });
        case "redirect":
          return response.writeHead(302, { location: "http://127.0.0.1:9/elsewhere" }).end();
        case "html":
          return response.writeHead(200, { "content-type": "text/html" }).end("<html>login</html>");
        case "wrong-shape":
          return json(200, { segments: [{ id: "seven", constraints: [] }] });
        case "slow":
          return void setTimeout(() => json(200, { segments: [] }), 11_000);
        default:
          return json(200, { segments: [] });
      }
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    fakeUrl = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;
    server = await startServer();
    app = await createApp(server.url, server.adminToken);
  });
  afterAll(async () => {
    await server?.stop();
    fake?.closeAllConnections();
    fake?.close();
  });

  const importOnce = (dryRun = true) =>
    request(server.url, "POST", `/admin/apps/${app.app.id}/import/unleash${dryRun ? "?dryRun=true" : ""}`, {
      token: server.adminToken,
      body: { url: fakeUrl, token: "secret-unleash-token", environments: { production: "production" } },
    });

  it("answers 502 for a 5xx, a redirect, an answer that is not JSON or not Unleash's shape, and imports nothing", async () => {
    for (const [fault, message] of [["5xx", /HTTP 503/], ["redirect", /redirects are not followed/], ["html", /not JSON/], ["wrong-shape", /not what Unleash 6 answers/]] as const) {
      behaviour = fault;
      const reply = await importOnce(false);
      expect(reply.status, fault).toBe(502);
      expect(reply.body.error.code, fault).toBe("UPSTREAM_UNAVAILABLE");
      expect(reply.body.error.message, fault).toMatch(message);
      if (fault === "wrong-shape") expect(reply.body.error.validationErrors[0].path).toBe("GET /api/admin/segments.segments.0.id");
    }
    expect((await request(server.url, "GET", "/features", { token: app.production.secretKey })).body.features).toEqual([]);
  });

  it("answers 400 at token when Unleash refuses it, and sends it only to Unleash", async () => {
    behaviour = "refused";
    const reply = await importOnce();
    expect(reply.status).toBe(400);
    expect(reply.body.error.validationErrors).toEqual([{ path: "token", message: expect.stringContaining("401") }]);
    behaviour = "ok";
    const imported = await importOnce(false);
    expect(imported.status).toBe(200);
    expect(imported.body.summary).toEqual({ created: 1, changed: 0, unchanged: 0 });
    expect(seenAuthorization.every((value) => value === "secret-unleash-token")).toBe(true);
    const audit = await request(server.url, "GET", "/admin/audit?limit=1000", { token: server.adminToken });
    expect(JSON.stringify(audit.body)).not.toContain("secret-unleash-token");
    expect(server.output.join("\n")).not.toContain("secret-unleash-token");
  });

  it("refuses with 400 naming the path a string holding a lone UTF-16 surrogate that Unleash answered, and imports nothing", async () => {
    behaviour = "lone-surrogate";
    const before = (await request(server.url, "GET", `/admin/apps/${app.app.id}/export`, { token: server.adminToken })).body.document.features;
    for (const dryRun of [true, false]) {
      const reply = await importOnce(dryRun);
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe("INVALID_DOCUMENT");
      expect(reply.body.error.validationErrors).toEqual([{ path: "features.0.description", message: expect.stringContaining("lone UTF-16 surrogate") }]);
    }
    expect((await request(server.url, "GET", `/admin/apps/${app.app.id}/export`, { token: server.adminToken })).body.document.features).toEqual(before);
  });

  it("gives up on a call after 10 s with a 502", async () => {
    behaviour = "slow";
    const started = Date.now();
    const reply = await importOnce();
    expect(reply.status).toBe(502);
    expect(reply.body.error.message).toMatch(/within 10 s/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
  }, 20_000);
});
