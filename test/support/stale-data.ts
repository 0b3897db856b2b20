/**
 * A data dir with an app made 60 days ago and flags made 40 days ago (the service cannot be made to wait 30 days):
 * "forgotten" never targeted, "everywhere" on for everyone in every environment since 35 days ago, "fresh" 2 days old.
 * Used by the MCP stale suite and the dashboard's stale badge suite.
 */
import { FeatureRepository } from "../../src/features/feature-repository.js";
import type { KvStore } from "../../src/storage/kv.js";
import { migrateStore } from "../../src/storage/schema-version.js";
import { planApp, TenancyRepository } from "../../src/tenancy/tenancy-repository.js";
import { makeDataDir, NATIVE_MODE } from "./server.js";

const DAY = 86_400_000;
export const daysAgo = (days: number) => new Date(Date.now() - days * DAY);

export async function prepareStaleDataDir(): Promise<{ dataDir: string; planned: ReturnType<typeof planApp> }> {
  const dataDir = makeDataDir();
  // Each twin's own store, loaded only for its twin: the native-free run must not need lmdb's binary.
  const store: KvStore =
    NATIVE_MODE === "0"
      ? await (await import("../../native-free/storage/log-store.js")).LogStore.open({ path: dataDir, durability: "commit" })
      : new (await import("../../src/storage/lmdb-store.js")).LmdbStore({ path: dataDir, durability: "commit" });
  await migrateStore(store, []);
  const planned = planApp("Old app", daysAgo(60).toISOString());
  await store.write(() => new TenancyRepository(store).insertApp(planned.app, planned.trackingKeyDigest, planned.environments.map((environment) => environment.record)));
  const features = new FeatureRepository(store);
  for (const key of ["forgotten", "everywhere", "fresh"]) await features.putFeature(planned.app.id, key, {}, key === "fresh" ? daysAgo(2) : daysAgo(40));
  for (const { record } of planned.environments) await features.putRules(record.id, "everywhere", "targeting", [{ filter: { type: "constant", value: true } }], daysAgo(35));
  await store.close();
  return { dataDir, planned };
}
