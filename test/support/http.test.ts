/**
 * The suites' HTTP helper waits out a retryable refusal as the SDKs' callers do (a 503 or 429 with Retry-After), so
 * a setup step on a busy machine is not failed by a projection that fell behind; a test about the refusal itself
 * opts out. Against a plain node:http server on 127.0.0.1 that refuses as told.
 */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "./http.js";

describe("request", () => {
  let server: Server;
  let url: string;
  /** What the server answers next, first to last; then 200. */
  let refusals: { status: number; retryAfter?: string }[] = [];
  let calls = 0;

  beforeAll(async () => {
    server = createServer((_, response) => {
      calls++;
      const next = refusals.shift();
      if (next === undefined) return void response.writeHead(200, { "content-type": "application/json" }).end('{"success":true}');
      const headers: Record<string, string> = { "content-type": "application/json", ...(next.retryAfter !== undefined ? { "retry-after": next.retryAfter } : {}) };
      response.writeHead(next.status, headers).end(JSON.stringify({ success: false, error: { code: "REFUSED" } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const send = (options: { retry?: boolean } = {}) => {
    calls = 0;
    return request(url, "POST", "/event", { body: { event: "e" }, ...options });
  };

  it("sends again after a 503 or a 429 with Retry-After, and answers what finally came", async () => {
    refusals = [{ status: 503, retryAfter: "0" }, { status: 429, retryAfter: "0" }];
    const reply = await send();
    expect(reply.status).toBe(200);
    expect(calls).toBe(3);
  });

  it("answers the refusal itself when the test asks to see it, when there is no Retry-After, or one longer than a test waits", async () => {
    refusals = [{ status: 503, retryAfter: "0" }];
    expect((await send({ retry: false })).status).toBe(503);
    expect(calls).toBe(1);
    refusals = [{ status: 503 }];
    expect((await send()).status).toBe(503);
    refusals = [{ status: 429, retryAfter: "900" }];
    expect((await send()).status).toBe(429);
    expect(calls).toBe(1);
    refusals = [{ status: 500, retryAfter: "0" }];
    expect((await send()).status).toBe(500);
  });

  it("gives up after ten retries and answers the last refusal", async () => {
    refusals = Array.from({ length: 20 }, () => ({ status: 503, retryAfter: "0" }));
    expect((await send()).status).toBe(503);
    expect(calls).toBe(11);
  });
});
