import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";

describe("rate limiting", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_RATE_LIMIT_PER_KEY: "5", SWITCHYARD_RATE_LIMIT_PER_ADDRESS: "1000" } });
  });
  afterAll(async () => {
    await server.stop();
  });

  it("answers 429 with Retry-After past a key's budget, leaving other keys and the admin API alone", async () => {
    const { production, development } = await createApp(server.url, server.adminToken);
    const replies = [];
    for (let index = 0; index < 20; index++) replies.push(await request(server.url, "GET", "/features/evaluated", { token: production.publishableKey, retry: false }));
    const limited = replies.filter((reply) => reply.status === 429);
    expect(replies.filter((reply) => reply.status === 200).length).toBeGreaterThanOrEqual(5);
    expect(limited.length).toBeGreaterThan(0);
    expect(limited[0]!.body.error.code).toBe("RATE_LIMITED");
    expect(Number(limited[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await request(server.url, "GET", "/features/evaluated", { token: development.publishableKey })).status).toBe(200);
    for (let index = 0; index < 10; index++) expect((await request(server.url, "GET", "/admin/apps", { token: server.adminToken })).status).toBe(200);
  });
});
