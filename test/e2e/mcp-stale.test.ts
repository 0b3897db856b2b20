/**
 * Issue 21's stale mark over the real service: a data dir prepared with flags made 40 days ago (the service cannot be
 * made to wait 30 days), then list_flags through the MCP client, before and after fresh SDK traffic and a targeting
 * change.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { planApp } from "../../src/tenancy/tenancy-repository.js";
import { adminRequest, request } from "../support/http.js";
import { connectMcp, type McpSession } from "../support/mcp.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";
import { prepareStaleDataDir } from "../support/stale-data.js";

describe(`stale flags over MCP (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let mcp: McpSession;
  let planned: ReturnType<typeof planApp>;
  let dataDir: string;

  beforeAll(async () => {
    ({ dataDir, planned } = await prepareStaleDataDir());
    server = await startServer({ dataDir });
    mcp = await connectMcp(`${server.url}/api/mcp`, { token: server.adminToken });
  });

  afterAll(async () => {
    await mcp?.close();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  type Marked = { key: string; stale: boolean; staleReason: string | null };
  const marks = (items: Marked[]) => Object.fromEntries(items.map((flag) => [flag.key, [flag.stale, flag.staleReason]]));
  /** list_flags' marks, after checking the dashboard's feature list gives every environment the same ones (issue 21 §2). */
  const staleness = async () => {
    const viaMcp = marks((await mcp.call("list_flags", { appId: planned.app.id })).value.flags);
    for (const { record } of planned.environments) {
      const listed = await adminRequest(server, "GET", `/admin/environments/${record.id}/features`);
      expect(listed.status).toBe(200);
      expect(marks(listed.body.features), record.name).toEqual(viaMcp);
    }
    return viaMcp;
  };

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
