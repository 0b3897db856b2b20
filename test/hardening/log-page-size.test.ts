/**
 * Admin log pages are bounded by size as well as by count. A publishable key (public by design) can store feature
 * events whose `evalContext` is close to the 2 MiB body limit; a page of 1000 of them would be ~2 GB of JSON — past
 * V8's longest string (a 500) or the heap (a crash). Pages now stop at MAX_PAGE_JSON_CHARS (never before their first
 * item) and `next` continues them, so the export path reads everything, a page at a time.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTrackingCall } from "../../src/schemas/tracking.js";
import { LmdbStore } from "../../src/storage/lmdb-store.js";
import { TenancyRepository } from "../../src/tenancy/tenancy-repository.js";
import { applyTracking } from "../../bench/support/direct-tracking.js";
import { TrackingReader } from "../../src/tracking/index.js";
import { MAX_PAGE_JSON_CHARS } from "../../src/tracking/reader.js";
import { createApp, request } from "../support/http.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

// Analytics and survey state derive from tracking only where they are registered, as every serving thread does.

describe("log pages bounded by size (reader)", () => {
  it("stops a page at the size budget, keeps the first item whatever its size, and continues with next", async () => {
    const dir = await mkdtemp(join(tmpdir(), "switchyard-page-size-"));
    const store = new LmdbStore({ path: dir, durability: "commit" });
    try {
      const issued = await new TenancyRepository(store).createApp("Acme");
      const environmentId = issued.environments[0]!.id;
      const bodies = Array.from({ length: 10 }, (_, index) => ({ event: `e${index}`, userId: "u", attributes: { pad: "x".repeat(index === 0 ? 5_000 : 300) } }));
      for (const body of bodies) {
        const parsed = parseTrackingCall("event", body);
        if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
        await applyTracking(store, environmentId, parsed.items, Date.UTC(2026, 10, 22));
      }
      const reader = new TrackingReader(store, 1_000);
      const pages: string[][] = [];
      let after: string | undefined;
      for (;;) {
        const page = reader.listEvents(environmentId, after, 1000);
        if (page.events.length === 0) {
          expect(page.next).toBe(after);
          break;
        }
        pages.push(page.events.map((event) => event.event));
        after = page.next;
      }
      // The oversized first item forms a page alone; then ~2 items of ~400 characters fit in 1,000.
      expect(pages[0]).toEqual(["e0"]);
      expect(pages.slice(1).every((page) => page.length >= 1 && page.length <= 2)).toBe(true);
      expect(pages.flat()).toEqual(bodies.map((body) => body.event));
      // The default budget still returns full pages of ordinary items.
      expect(new TrackingReader(store).listEvents(environmentId, undefined, 1000).events).toHaveLength(10);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe(`log pages bounded by size (${NATIVE_MODE === "0" ? "native-free" : "native"} twin, over HTTP)`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.stop();
  });

  it("pages feature events of ~1.9 MB each without ever building one giant answer", { timeout: 60_000 }, async () => {
    const { production } = await createApp(server.url, server.adminToken);
    const big = "c".repeat(1_900_000);
    const count = 6;
    for (let index = 0; index < count; index++) {
      const stored = await request(server.url, "POST", "/features/events", {
        token: production.publishableKey,
        rawBody: `{"action":"check","key":"k${index}","evalResult":true,"evalContext":{"blob":"${big}"}}`,
        contentType: "application/json",
      });
      expect(stored.status).toBe(200);
    }
    const sizes: number[] = [];
    let after = "";
    for (let guard = 0; guard < 20; guard++) {
      const page = await request(server.url, "GET", `/admin/environments/${production.id}/feature-events?limit=1000${after ? `&after=${after}` : ""}`, { token: server.adminToken });
      expect(page.status).toBe(200);
      if (page.body.featureEvents.length === 0) break;
      sizes.push(page.body.featureEvents.length);
      after = page.body.next;
    }
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(count);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(Math.ceil(MAX_PAGE_JSON_CHARS / 1_900_000));
    expect(sizes.length).toBeGreaterThan(1);
  });
});
