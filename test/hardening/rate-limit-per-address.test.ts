/**
 * Rate limiting per client address (SWITCHYARD_RATE_LIMIT_PER_ADDRESS): one budget per address across every key —
 * garbage keys included, since the address is checked before the key, so guessing keys is throttled too — while
 * another address keeps its own budget, a spoofed `X-Forwarded-For` buys nothing, and the admin API and /health are
 * not limited. Windows are fixed seconds: bursts start just after a second begins so they fit in one window.
 */
import { request as httpRequest } from "node:http";
import { describe, expect, it } from "vitest";
import { useAppServer } from "../support/app-server.js";
import { NATIVE_MODE } from "../support/server.js";

const PER_ADDRESS = 5;

interface Reply {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/** One request from a chosen local address (any 127.x.y.z reaches the loopback listener). */
function call(port: number, path: string, options: { localAddress?: string; headers?: Record<string, string>; method?: string; body?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      { host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: options.headers, localAddress: options.localAddress ?? "127.0.0.1", agent: false },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode!, retryAfter: response.headers["retry-after"] as string | undefined, body }));
      },
    );
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}

/** Waits for the start of the next second, so that a short burst stays inside one rate-limit window. */
async function startOfSecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() % 1_000) + 5));
}

describe(`rate limiting per address (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  const app = useAppServer({ env: { SWITCHYARD_RATE_LIMIT_PER_ADDRESS: String(PER_ADDRESS), SWITCHYARD_RATE_LIMIT_PER_KEY: "0" } });

  it("shares one budget per address across keys, answering 429 with Retry-After in the envelope", async () => {
    const tokens = [app.keys.production.publishableKey, app.keys.production.secretKey, app.keys.development.publishableKey, "pub_production_guessed0123456789abcdefghijkl"];
    await startOfSecond();
    const replies: Reply[] = [];
    for (let index = 0; index < 4 * PER_ADDRESS; index++) {
      replies.push(await call(app.server.port, "/features/evaluated", { headers: { authorization: `Bearer ${tokens[index % tokens.length]}` } }));
    }
    const limited = replies.filter((reply) => reply.status === 429);
    // All in one window: the first PER_ADDRESS pass (200, or 401 for the guessed key), the rest are refused.
    expect(replies.slice(0, PER_ADDRESS).every((reply) => reply.status !== 429)).toBe(true);
    expect(limited.length).toBeGreaterThanOrEqual(2 * PER_ADDRESS);
    const envelope = JSON.parse(limited[0]!.body);
    expect(envelope).toMatchObject({ success: false, error: { code: "RATE_LIMITED" } });
    expect(Number(limited[0]!.retryAfter)).toBeGreaterThanOrEqual(1);
    // Guessing keys is throttled like any other call: the address is checked before the key.
    const guesses = replies.filter((_, index) => index % tokens.length === 3 && index >= PER_ADDRESS);
    expect(guesses.every((reply) => reply.status === 429)).toBe(true);
  });

  it("keeps a separate budget for another address, ignores X-Forwarded-For, and never limits the admin API or /health", async () => {
    const token = { authorization: `Bearer ${app.keys.production.publishableKey}` };
    await startOfSecond();
    for (let index = 0; index < 3 * PER_ADDRESS; index++) await call(app.server.port, "/features/evaluated", { headers: token });
    const spoofed = await call(app.server.port, "/features/evaluated", { headers: { ...token, "x-forwarded-for": "203.0.113.7", forwarded: "for=203.0.113.7" } });
    expect(spoofed.status).toBe(429);
    // The tracking API and POSTs share the address budget.
    const tracking = await call(app.server.port, `/${app.keys.app.trackingKey}/event`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"event":"e","userId":"u"}',
    });
    expect(tracking.status).toBe(429);
    const other = await call(app.server.port, "/features/evaluated", { headers: token, localAddress: "127.0.0.2" });
    expect(other.status).toBe(200);
    for (let index = 0; index < 3 * PER_ADDRESS; index++) {
      expect((await call(app.server.port, "/admin/apps", { headers: { authorization: `Bearer ${app.server.adminToken}` } })).status).toBe(200);
      expect((await call(app.server.port, "/health")).status).toBe(200);
    }
  });

  it("lets the address through again in the next window", async () => {
    await startOfSecond();
    const reply = await call(app.server.port, "/features/evaluated", { headers: { authorization: `Bearer ${app.keys.production.publishableKey}` } });
    expect(reply.status).toBe(200);
  });
});
