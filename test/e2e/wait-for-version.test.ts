/** `waitForVersion` on `GET /features` and `GET /features/evaluated` (API.md §3). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WAIT_FOR_VERSION_MS } from "../../src/features/wait-for-version.js";
import { createApp, request } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";

describe("waitForVersion", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  async function setup() {
    const { app, production } = await createApp(server.url, server.adminToken);
    await request(server.url, "PUT", `/admin/apps/${app.id}/features/huddle`, { token: server.adminToken, body: {} });
    const version = (await request(server.url, "GET", "/features", { token: production.secretKey })).body.flagStateVersion as number;
    const target = (value: boolean) =>
      request(server.url, "PUT", `/admin/environments/${production.id}/features/huddle/targeting`, {
        token: server.adminToken,
        body: { rules: [{ filter: { type: "constant", value } }] },
      });
    const endpoints = [
      ["/features", production.secretKey, ""],
      ["/features/evaluated", production.publishableKey, "&context.user.id=u1"],
    ] as const;
    return { production, version, target, endpoints };
  }

  it("holds the answer until the version is reached, then answers with the new state", async () => {
    const { production, target, endpoints } = await setup();
    for (const [path, token, extra] of endpoints) {
      const version = (await request(server.url, "GET", "/features", { token: production.secretKey })).body.flagStateVersion as number;
      const startedAt = Date.now();
      const pending = request(server.url, "GET", `${path}?waitForVersion=${version + 1}${extra}`, { token });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const changed = await target(true);
      const changedAt = Date.now();
      const reply = await pending;
      const answeredAt = Date.now();
      expect(reply.status, path).toBe(200);
      expect(reply.body.flagStateVersion, path).toBe(changed.body.flagStateVersion);
      // It waited for the change, and answered promptly after it.
      expect(answeredAt - startedAt, path).toBeGreaterThanOrEqual(300);
      expect(answeredAt - changedAt, path).toBeLessThan(1_000);
      if (path === "/features") expect(reply.body.features[0].targeting.rules, path).toEqual([{ filter: { type: "constant", value: true } }]);
      else expect(reply.body.features.huddle.isEnabled, path).toBe(true);
      await target(false);
    }
  });

  it("answers at once when the version is already reached, or the parameter is not a version", async () => {
    const { version, endpoints } = await setup();
    for (const [path, token, extra] of endpoints) {
      for (const wanted of [String(version), "0", "abc", "-1"]) {
        const startedAt = Date.now();
        const reply = await request(server.url, "GET", `${path}?waitForVersion=${wanted}${extra}`, { token });
        expect(reply.status, `${path} ${wanted}`).toBe(200);
        expect(reply.body.flagStateVersion).toBe(version);
        expect(Date.now() - startedAt, `${path} ${wanted}`).toBeLessThan(1_000);
      }
    }
  });

  it(`gives up after ${WAIT_FOR_VERSION_MS} ms and answers with what there is`, async () => {
    const { version, endpoints } = await setup();
    const startedAt = Date.now();
    const replies = await Promise.all(endpoints.map(([path, token, extra]) => request(server.url, "GET", `${path}?waitForVersion=${version + 100}${extra}`, { token })));
    const elapsed = Date.now() - startedAt;
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.body.flagStateVersion).toBe(version);
    }
    expect(elapsed).toBeGreaterThanOrEqual(WAIT_FOR_VERSION_MS - 100);
    expect(elapsed).toBeLessThan(WAIT_FOR_VERSION_MS + 2_000);
  });
});
