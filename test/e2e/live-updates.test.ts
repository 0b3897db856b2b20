/** Live updates (API.md §5): `GET /sse/server` and `GET /sse/client` over a real server. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";
import { openSse, type SseConnection } from "../support/sse.js";

const KEEP_ALIVE_MS = 250;
const RULES = { rules: [{ filter: { type: "constant", value: true } }] };

describe("live-update streams", () => {
  let server: TestServer;
  const open: SseConnection[] = [];
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_SSE_KEEPALIVE_MS: String(KEEP_ALIVE_MS) } });
  });
  afterAll(async () => {
    for (const connection of open) connection.close();
    await server.stop();
  });

  async function stream(path: string, headers: Record<string, string> = {}): Promise<SseConnection> {
    const connection = await openSse(server.url + path, headers);
    open.push(connection);
    return connection;
  }

  async function newApp() {
    const created = await createApp(server.url, server.adminToken);
    const put = await request(server.url, "PUT", `/admin/apps/${created.app.id}/features/huddle`, { token: server.adminToken, body: {} });
    expect(put.status).toBe(200);
    return created;
  }

  it("/sse/server answers with the stream headers at once, then a comment and the current version", async () => {
    const { production } = await newApp();
    const connection = await stream("/sse/server", { authorization: `Bearer ${production.secretKey}` });
    expect(connection.status).toBe(200);
    expect(connection.headers.get("content-type")).toBe("text/event-stream");
    expect(connection.headers.get("cache-control")).toBe("no-cache");
    expect(connection.headers.get("connection")).toBe("keep-alive");
    // Nothing but the stream itself comes before the headers: no waiting for a first event.
    expect(connection.headersAfterMs).toBeLessThan(1_000);
    await connection.waitFor((c) => c.versions().length === 1);
    expect(connection.frames()[0]).toBe(": connected");
    // The app's one feature was created: version 1, replayed so a client can catch up.
    expect(connection.frames()[1]).toBe('data: {"name":"flags-updated","data":{"flagStateVersion":1}}');
  });

  it("sends flags-updated with the new version on every change, to that environment's streams only", async () => {
    const { app, production, development } = await newApp();
    const prod = await stream("/sse/server", { authorization: `Bearer ${production.secretKey}` });
    const dev = await stream("/sse/server", { authorization: `Bearer ${development.secretKey}` });
    await prod.waitFor((c) => c.versions().length === 1);
    await dev.waitFor((c) => c.versions().length === 1);

    const targeted = await request(server.url, "PUT", `/admin/environments/${production.id}/features/huddle/targeting`, { token: server.adminToken, body: RULES });
    expect(targeted.status).toBe(200);
    await prod.waitFor((c) => c.versions().includes(targeted.body.flagStateVersion));
    const configured = await request(server.url, "PUT", `/admin/environments/${production.id}/features/huddle/config`, {
      token: server.adminToken,
      body: { variants: [{ filter: { type: "constant", value: true }, key: "a", payload: 1 }] },
    });
    await prod.waitFor((c) => c.versions().includes(configured.body.flagStateVersion));
    expect(prod.versions()).toEqual([1, 2, 3]);

    // An app-level change (a new feature) shows in both environments.
    await request(server.url, "PUT", `/admin/apps/${app.id}/features/second`, { token: server.adminToken, body: {} });
    await prod.waitFor((c) => c.versions().includes(4));
    await dev.waitFor((c) => c.versions().includes(2));
    expect(dev.versions()).toEqual([1, 2]);
    // The default `message` event: no `event:` line anywhere.
    expect(prod.text()).not.toContain("event:");
  });

  it("writes a keep-alive comment every interval", async () => {
    const { production } = await newApp();
    const connection = await stream("/sse/server", { authorization: `Bearer ${production.secretKey}` });
    const startedAt = Date.now();
    await connection.waitFor((c) => c.frames().filter((frame) => frame === ": keep-alive").length >= 3, 3_000);
    // Three comments at a 250 ms interval: not much less than 750 ms (one shared timer, so the first may come early).
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2 * KEEP_ALIVE_MS - 50);
  });

  it("/sse/client takes the publishable key and context in the query and answers CORS for the page's origin", async () => {
    const { production } = await newApp();
    const context = encodeURIComponent(JSON.stringify({ user: { id: "u1" }, company: { id: "c1", plan: "pro" } }));
    const connection = await stream(`/sse/client?publishableKey=${production.publishableKey}&context=${context}&reflag-sdk-version=browser-sdk%2F1.6.1`, {
      origin: "https://app.example",
    });
    expect(connection.status).toBe(200);
    expect(connection.headers.get("content-type")).toBe("text/event-stream");
    expect(connection.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(connection.headers.get("access-control-allow-credentials")).toBe("true");
    await connection.waitFor((c) => c.versions().length === 1);
    const targeted = await request(server.url, "PUT", `/admin/environments/${production.id}/features/huddle/targeting`, { token: server.adminToken, body: RULES });
    await connection.waitFor((c) => c.versions().at(-1) === targeted.body.flagStateVersion);

    // A secret key works in the header, as for every publishable-or-secret route.
    const secret = await stream("/sse/client", { authorization: `Bearer ${production.secretKey}` });
    expect(secret.status).toBe(200);
  });

  it("refuses wrong credentials and malformed context with the error envelope", async () => {
    const { production } = await newApp();
    const cases: [string, Record<string, string>, number, string][] = [
      ["/sse/server", {}, 401, "UNAUTHORIZED"],
      ["/sse/server", { authorization: "Bearer sec_production_nope_nope_nope_nope_nope_nope" }, 401, "UNAUTHORIZED"],
      ["/sse/server", { authorization: `Bearer ${production.publishableKey}` }, 403, "FORBIDDEN"],
      [`/sse/server?publishableKey=${production.publishableKey}`, {}, 403, "FORBIDDEN"],
      [`/sse/client?publishableKey=${production.secretKey}`, {}, 403, "FORBIDDEN"],
      ["/sse/client", { authorization: `Bearer ${server.adminToken}` }, 403, "FORBIDDEN"],
      [`/sse/client?publishableKey=${production.publishableKey}&context=%7Bnot-json`, {}, 400, "INVALID_QUERY"],
      [`/sse/client?publishableKey=${production.publishableKey}&context=%5B1%5D`, {}, 400, "INVALID_QUERY"],
    ];
    for (const [path, headers, status, code] of cases) {
      const reply = await fetch(server.url + path, { headers: { ...headers, origin: "https://app.example" } });
      expect(reply.status, path).toBe(status);
      expect(reply.headers.get("content-type")).toBe("application/json");
      expect(reply.headers.get("access-control-allow-origin")).toBe("https://app.example");
      expect(((await reply.json()) as { error: { code: string } }).error.code, path).toBe(code);
    }
  });
});

describe("live-update stream limits and shutdown", () => {
  let server: TestServer;
  const open: SseConnection[] = [];
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_SSE_MAX_STREAMS_PER_KEY: "2", SWITCHYARD_SSE_MAX_STREAMS: "3" } });
  });
  afterAll(async () => {
    for (const connection of open) connection.close();
    await server.stop();
  });

  async function stream(path: string, headers: Record<string, string> = {}): Promise<SseConnection> {
    const connection = await openSse(server.url + path, headers);
    open.push(connection);
    return connection;
  }

  it("answers 429 with Retry-After past the per-key and the global limit, and frees slots when clients leave", async () => {
    const { production } = await createApp(server.url, server.adminToken);
    const secret = { authorization: `Bearer ${production.secretKey}` };
    const first = await stream("/sse/server", secret);
    const second = await stream("/sse/server", secret);
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await stream("/sse/server", secret);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    await third.ended;
    expect(JSON.parse(third.text())).toMatchObject({ success: false, error: { code: "RATE_LIMITED" } });

    // Another key of the same environment has its own allowance, up to the process-wide limit of 3.
    const browser = await stream(`/sse/client?publishableKey=${production.publishableKey}`);
    expect(browser.status).toBe(200);
    const overGlobal = await stream(`/sse/client?publishableKey=${production.publishableKey}`);
    expect(overGlobal.status).toBe(429);

    // A client that goes away gives its slot back.
    first.close();
    let again: SseConnection | undefined;
    for (let attempt = 0; attempt < 60 && again?.status !== 200; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      again = await stream("/sse/server", secret);
    }
    expect(again!.status).toBe(200);
    await again!.waitFor((c) => c.versions().length === 1);
  });

  it("ends every open stream on shutdown and still exits 0", async () => {
    const { production } = await createApp(server.url, server.adminToken);
    // The previous test may still hold slots; this app's keys have their own allowance but the global one is shared.
    for (const connection of open.splice(0)) connection.close();
    let connection: SseConnection | undefined;
    for (let attempt = 0; attempt < 60 && connection?.status !== 200; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      connection = await openSse(`${server.url}/sse/client?publishableKey=${production.publishableKey}`);
    }
    expect(connection!.status).toBe(200);
    await connection!.waitFor((c) => c.versions().length === 1);
    const stoppedAt = Date.now();
    expect(await server.stop()).toBe(0);
    await connection!.ended;
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
  });
});
