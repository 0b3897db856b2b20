/**
 * App ids shrank to 14 characters for the Reflag CLI (issue 18); an app made before, with a 16-character id
 * (`app_` + 12), keeps working on every route. The old app is written into the data dir with the store the twin uses,
 * as an older release left it, before the service starts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogStore } from "../../native-free/storage/log-store.js";
import type { KvStore } from "../../src/storage/kv.js";
import { LmdbStore } from "../../src/storage/lmdb-store.js";
import { migrateStore } from "../../src/storage/schema-version.js";
import { randomBase62 } from "../../src/tenancy/identifiers.js";
import { planApp, TenancyRepository } from "../../src/tenancy/tenancy-repository.js";
import { request } from "../support/http.js";
import { makeDataDir, NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

describe(`16-character app ids from before issue 18 (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  const legacyId = `app_${randomBase62(12)}`;
  let publishableKey: string;
  let productionId: string;

  beforeAll(async () => {
    const dataDir = makeDataDir();
    const store: KvStore = NATIVE_MODE === "0" ? await LogStore.open({ path: dataDir, durability: "commit" }) : new LmdbStore({ path: dataDir, durability: "commit" });
    await migrateStore(store, []);
    const planned = planApp("Legacy", new Date().toISOString());
    const app = { ...planned.app, id: legacyId };
    const environments = planned.environments.map((environment) => ({ ...environment.record, appId: legacyId }));
    await store.write(() => new TenancyRepository(store).insertApp(app, planned.trackingKeyDigest, environments));
    await store.close();
    publishableKey = planned.environments[0]!.issued.publishableKey;
    productionId = planned.environments[0]!.record.id;
    server = await startServer({ dataDir });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("serves the old app on the management API, to SDKs, and on /api", async () => {
    expect(legacyId).toHaveLength(16);
    const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });
    expect((await admin("GET", `/admin/apps/${legacyId}`)).body.app.id).toBe(legacyId);
    expect((await admin("PUT", `/admin/apps/${legacyId}/features/old-flag`, { name: "Old flag" })).status).toBe(200);
    expect((await admin("PUT", `/admin/apps/${legacyId}/features/old-flag/stage`, { stage: "General availability" })).status).toBe(200);
    const evaluated = await request(server.url, "GET", `/features/evaluated?context.user.id=u1&publishableKey=${publishableKey}`);
    expect(evaluated.body.features["old-flag"]).toMatchObject({ isEnabled: true, stage: "General availability" });
    const bootstrap = await admin("GET", "/api/bootstrap");
    expect(bootstrap.body.org.apps.map((app: { id: string }) => app.id)).toContain(legacyId);
    const flags = await admin("GET", `/api/apps/${legacyId}/features?envId=${productionId}`);
    expect(flags.body.data.map((flag: { name: string }) => flag.name)).toEqual(["Old flag"]);
  });
});
