import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, request, type JsonReply } from "../support/http.js";
import { startServer, type TestServer } from "../support/server.js";

/**
 * Whether two requests overlap depends on scheduling: on a loaded machine the in-process store can commit each one
 * before the next arrives. Bursts are therefore repeated until one is refused (a bounded number of times).
 */
const MAX_BURSTS = 10;
const REQUESTS_PER_BURST = 20;

describe("a full work queue", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_MAX_PENDING_WRITES: "1" } });
  });
  afterAll(async () => {
    await server.stop();
  });

  it("answers a retryable 503 with Retry-After, and stores each request whole or not at all", async () => {
    const { production } = await createApp(server.url, server.adminToken);
    const bulk = (batch: number) => Array.from({ length: 500 }, (_, index) => ({ type: "event", event: `overload-${batch}`, userId: `u${index}` }));
    const replies: JsonReply[] = [];
    for (let burst = 0; burst < MAX_BURSTS && !replies.some((reply) => reply.status === 503); burst++) {
      const first = replies.length;
      const sent = Array.from({ length: REQUESTS_PER_BURST }, (_, offset) =>
        request(server.url, "POST", "/bulk", { token: production.secretKey, body: bulk(first + offset), retry: false }),
      );
      replies.push(...(await Promise.all(sent)));
    }
    const refused = replies.filter((reply) => reply.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.body.error.code).toBe("OVERLOADED");
    expect(Number(refused[0]!.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(replies.every((reply) => reply.status === 200 || reply.status === 503)).toBe(true);

    const counts = new Map<string, number>();
    let after = "";
    for (;;) {
      const page = await request(server.url, "GET", `/admin/environments/${production.id}/events?limit=1000${after ? `&after=${after}` : ""}`, { token: server.adminToken });
      for (const event of page.body.events as { event: string }[]) counts.set(event.event, (counts.get(event.event) ?? 0) + 1);
      if (page.body.events.length === 0) break;
      after = page.body.next;
    }
    replies.forEach((reply, batch) => expect(counts.get(`overload-${batch}`) ?? 0).toBe(reply.status === 200 ? 500 : 0));
  }, 60_000);
});
