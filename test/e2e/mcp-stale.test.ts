/**
 * Issue 21's stale mark over the real service: a data dir prepared with flags made 40 days ago (the service cannot be
 * made to wait 30 days), then list_flags through the MCP client, before and after fresh SDK traffic and a targeting
 * change.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FeatureRepository } from "../../src/features/feature-repository.js";
import type { KvStore } from "../../src/storage/kv.js";
import { migrateStore } from "../../src/storage/schema-version.js";
import { planApp, TenancyRepository } from "../../src/tenancy/tenancy-repository.js";
import { request } from "../support/http.js";
import { connectMcp, type McpSession } from "../support/mcp.js";
import { makeDataDir, NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const DAY = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

describe(`stale flags over MCP (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let mcp: McpSession;
  let planned: ReturnType<typeof planApp>;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = makeDataDir();
    // Each twin's own store, loaded only for its twin: the native-free run must not need lmdb's binary.
    const store: KvStore =
      NATIVE_MODE === "0"
        ? await (await import("../../native-free/storage/log-store.js")).LogStore.open({ path: dataDir, durability: "commit" })
        : new (await import("../../src/storage/lmdb-store.js")).LmdbStore({ path: dataDir, durability: "commit" });
    await migrateStore(store);
    planned = planApp("Old app", daysAgo(60).toISOString());
    await store.write(() => new TenancyRepository(store).insertApp(planned.app, planned.trackingKeyDigest, planned.environments.map((environment) => environment.record)));
    const features = new FeatureRepository(store);
    for (const key of ["forgotten", "everywhere", "fresh"]) await features.putFeature(planned.app.id, key, {}, key === "fresh" ? daysAgo(2) : daysAgo(40));
    for (const { record } of planned.environments) await features.putRules(record.id, "everywhere", "targeting", [{ filter: { type: "constant", value: true } }], daysAgo(35));
    await store.close();
    server = await startServer({ dataDir });
    mcp = await connectMcp(`${server.url}/api/mcp`, { token: server.adminToken });
  });

  afterAll(async () => {
    await mcp?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const staleness = async () =>
    Object.fromEntries(
      (await mcp.call("list_flags", { appId: planned.app.id })).value.flags.map((flag: { key: string; stale: boolean; staleReason: string | null }) => [flag.key, [flag.stale, flag.staleReason]]),
    );

  it("marks old flags nothing evaluated, and old flags served one answer to everyone; SDK traffic and targeting change that", async () => {
    expect(await staleness()).toEqual({ forgotten: [true, "unevaluated"], everywhere: [true, "unevaluated"], fresh: [false, null] });

    // An SDK reports checks of both: "forgotten" (off everywhere, never targeted) is still one answer for everyone.
    const production = planned.environments.find((environment) => environment.record.name === "production")!.issued;
    const tracked = await request(server.url, "POST", "/features/events", {
      token: production.publishableKey,
      body: [
        { action: "check", key: "forgotten", evalResult: false },
        { action: "check", key: "everywhere", evalResult: true },
      ],
    });
    expect(tracked.status).toBe(200);
    expect(await staleness()).toEqual({ forgotten: [true, "constant"], everywhere: [true, "constant"], fresh: [false, null] });

    // Targeting a company makes the answer depend on who asks, and it changed today.
    const targeted = await mcp.call("set_flag_targeting", { appId: planned.app.id, key: "everywhere", environmentId: production.id, companyIds: ["acme"] });
    expect(targeted.isError, targeted.text).toBe(false);
    expect(await staleness()).toEqual({ forgotten: [true, "constant"], everywhere: [false, null], fresh: [false, null] });
  });
});
