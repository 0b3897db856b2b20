/** CORS (API.md §2) on every front-facing path: preflights, and the headers on real answers, errors included. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";
import { openSse } from "../support/sse.js";

const ORIGIN = "https://shop.example";
const SDK_HEADERS = ["authorization", "content-type", "bucket-sdk-version", "reflag-sdk-version"];

describe("CORS on the front-facing API", () => {
  let server: TestServer;
  let keys: { publishableKey: string; secretKey: string; trackingKey: string };
  beforeAll(async () => {
    server = await startServer();
    const { app, production } = await createApp(server.url, server.adminToken);
    keys = { publishableKey: production.publishableKey, secretKey: production.secretKey, trackingKey: app.trackingKey };
  });
  afterAll(async () => {
    await server.stop();
  });

  /** Every front-facing route: method, path, and whether it streams. */
  const routes = (): [string, string, boolean][] => [
    ["GET", "/features", false],
    ["GET", "/features/evaluated", false],
    ["GET", "/features/enabled", false],
    ["POST", "/features/events", false],
    ["POST", "/user", false],
    ["POST", "/company", false],
    ["POST", "/event", false],
    ["POST", "/feedback", false],
    ["POST", "/bulk", false],
    ["POST", "/flags/opt-in", false],
    ["POST", "/feedback/prompt-events", false],
    ["POST", "/feedback/prompting-init", false],
    ["GET", "/sse/server", true],
    ["GET", "/sse/client", true],
    ...["user", "company", "event", "feedback", "bulk"].map((call): [string, string, boolean] => ["POST", `/${keys.trackingKey}/${call}`, false]),
  ];

  it("answers every preflight with 204, no body, the echoed origin and the SDKs' headers", async () => {
    for (const [method, path] of routes()) {
      const response = await fetch(server.url + path, {
        method: "OPTIONS",
        headers: { origin: ORIGIN, "access-control-request-method": method, "access-control-request-headers": SDK_HEADERS.join(",") },
      });
      expect(response.status, path).toBe(204);
      expect(await response.text()).toBe("");
      expect(response.headers.get("access-control-allow-origin"), path).toBe(ORIGIN);
      expect(response.headers.get("access-control-allow-credentials"), path).toBe("true");
      const allowedMethods = response.headers.get("access-control-allow-methods")!.split(/,\s*/);
      expect(allowedMethods, path).toContain(method);
      const allowedHeaders = response.headers.get("access-control-allow-headers")!.split(/,\s*/);
      for (const header of SDK_HEADERS) expect(allowedHeaders, path).toContain(header);
    }
  });

  it("puts the CORS headers on real answers, successes and errors alike", async () => {
    for (const [method, path, streams] of routes()) {
      const token = path === "/features" || path === "/sse/server" ? keys.secretKey : keys.publishableKey;
      const headers: Record<string, string> = { origin: ORIGIN, authorization: `Bearer ${token}` };
      if (streams) {
        const stream = await openSse(server.url + path, headers);
        expect(stream.status, path).toBe(200);
        expect(stream.headers.get("access-control-allow-origin"), path).toBe(ORIGIN);
        expect(stream.headers.get("access-control-allow-credentials"), path).toBe("true");
        stream.close();
        continue;
      }
      // An empty JSON object is a valid or an invalid body depending on the route; either way CORS must be there.
      const response = await fetch(server.url + path, { method, headers: { ...headers, ...(method === "POST" ? { "content-type": "application/json" } : {}) }, ...(method === "POST" ? { body: "{}" } : {}) });
      expect(response.status, path).toBeLessThan(500);
      expect(response.headers.get("access-control-allow-origin"), path).toBe(ORIGIN);
      expect(response.headers.get("access-control-allow-credentials"), path).toBe("true");
      await response.arrayBuffer();
    }
    // A missing key is answered with CORS too, so the page can read the 401.
    const unauthorized = await fetch(`${server.url}/features/evaluated`, { headers: { origin: ORIGIN } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe(ORIGIN);
  });
});
