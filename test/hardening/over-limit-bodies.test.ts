/**
 * Issue 34: a body over its route's limit is answered 413 to every client, on every route that reads a body, on the
 * twin NATIVE_MODE selects: the front end drains what the client still sends before it answers and closes
 * (src/http/over-limit-body.ts), so Node's `http` client, which writes its whole body before it reads, gets its 413
 * instead of EPIPE. The routes come from the service's own registry, so a new route is covered without editing this.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildRouters } from "../../src/routes/registry.js";
import { sendInPieces, type Reply } from "../front-end/http-client.js";
import { request } from "../support/http.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";
import { buildWorld, type World } from "./support/world.js";

const MiB = 1024 * 1024;

interface BodyRoute {
  method: string;
  path: string;
  bodyLimit: number;
}

function bodyRoutes(world: World): BodyRoute[] {
  const { sdk } = buildRouters(false, () => undefined);
  const fill: Record<string, string> = { trackingKey: world.a.trackingKey, appId: world.a.id, environmentId: world.a.production.id, envId: world.a.production.id };
  const routes: BodyRoute[] = [];
  for (const { method, pattern, route } of sdk.entries()) {
    if (route.bodyLimit === 0) continue;
    const path = pattern.replace(/:([A-Za-z]+)/g, (_, name: string) => fill[name] ?? `p-${name}`);
    routes.push({ method, path, bodyLimit: route.bodyLimit });
  }
  return routes;
}

function expectRefused(reply: Reply, label: string): void {
  expect(reply.status, label).toBe(413);
  const body = JSON.parse(reply.body.toString());
  // OFREP's routes answer in OFREP's error body (API.md §14).
  if (label.includes(" /ofrep/")) expect(body, label).toMatchObject({ errorCode: "GENERAL", errorDetails: "The request body is over the limit." });
  else expect(body.error.code, label).toBe("PAYLOAD_TOO_LARGE");
  expect(reply.headers.connection, label).toBe("close");
}

describe(`over-limit bodies on every route that reads one (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let world: World;
  let routes: BodyRoute[];

  beforeAll(async () => {
    server = await startServer();
    world = await buildWorld(server.url, server.adminToken);
    routes = bodyRoutes(world);
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("finds the body-reading routes in the registry", () => {
    // Tracking, the tracking API, opt-in, prompting and the management API at least.
    expect(routes.length).toBeGreaterThanOrEqual(40);
    for (const path of ["/bulk", "/event", "/flags/opt-in", `/${world.a.trackingKey}/bulk`]) expect(routes.map((route) => route.path)).toContain(path);
  });

  it("answers 413 through node:http writing 1 MiB pieces, with a declared length and chunked", async () => {
    const headers = { authorization: `Bearer ${world.a.production.secretKey}` };
    for (const route of routes) {
      const totalBytes = route.bodyLimit + 1.5 * MiB;
      for (const declareLength of [true, false]) {
        const label = `${route.method} ${route.path} ${declareLength ? "content-length" : "chunked"}`;
        const reply = await sendInPieces(server.port, { method: route.method, path: route.path, headers, totalBytes, pieceBytes: MiB, declareLength }).catch((error: Error) => {
          throw new Error(`${label}: no answer (${error.message})`);
        });
        expectRefused(reply, label);
      }
    }
  });

  it("answers 413 to slow uploads and to many at once, and stays healthy with nothing stored", async () => {
    const headers = { authorization: `Bearer ${world.a.production.secretKey}` };
    expectRefused(await sendInPieces(server.port, { path: "/event", headers, totalBytes: 256 * 1024, pieceBytes: 32 * 1024, pauseMs: 20 }), "slow /event");
    const many = Array.from({ length: 12 }, (_, index) =>
      sendInPieces(server.port, { path: index % 2 ? "/bulk" : `/${world.a.trackingKey}/bulk`, headers, totalBytes: 2.4e6 + index * MiB, pieceBytes: MiB, declareLength: index % 3 !== 0 }),
    );
    for (const reply of await Promise.all(many)) expectRefused(reply, "concurrent /bulk");
    expect((await request(server.url, "GET", "/health")).status).toBe(200);
    // None of the refused bodies was stored: after one accepted event, that event is the only one listed.
    const accepted = await request(server.url, "POST", "/event", { token: world.a.production.secretKey, body: { event: "after-refusals", userId: "u1" } });
    expect(accepted.status).toBe(200);
    const events = await request(server.url, "GET", `/admin/environments/${world.a.production.id}/events`, { token: server.adminToken });
    expect(events.status).toBe(200);
    expect(events.body.events.map((event: { event: string }) => event.event)).toEqual(["after-refusals"]);
  });
});
