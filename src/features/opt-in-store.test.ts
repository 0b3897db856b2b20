import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FeatureRepository } from "./feature-repository.js";
import { LmdbStore } from "../storage/lmdb-store.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import type { KvStore } from "../storage/kv.js";
import { applyOptIn, listOptedInFeatures, readOptIn, type OptInChoice } from "./opt-in-store.js";

/** One choice in its own transaction, as the `opt-in.set` change applies it. */
const writeOptIn = (store: KvStore, choice: OptInChoice) => store.write(() => applyOptIn(store, choice, new Date().toISOString()));

describe("opt-in store", () => {
  let dir: string;
  let store: LmdbStore;
  let appId: string;
  let environmentId: string;
  let otherEnvironmentId: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-optin-"));
    store = new LmdbStore({ path: dir, durability: "commit" });
    const issued = await new TenancyRepository(store).createApp("Acme");
    appId = issued.app.id;
    environmentId = issued.environments[0]!.id;
    otherEnvironmentId = issued.environments[1]!.id;
    const features = new FeatureRepository(store);
    await features.putFeature(appId, "beta", { optInEnabled: true, description: "Beta editor" });
    await features.putFeature(appId, "labs", { optInEnabled: true });
    await features.putFeature(appId, "closed", {});
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const choice = (changes: Partial<OptInChoice>): OptInChoice => ({ environmentId, appId, featureKey: "beta", scope: "user", id: "u1", optedIn: true, ...changes });
  const version = (id = environmentId) => new TenancyRepository(store).getEnvironment(id)!.flagStateVersion;

  it("stores choices per scope, id, feature and environment, bumping the version only on a change", async () => {
    const start = version();
    expect(await writeOptIn(store, choice({}))).toEqual({ kind: "stored", flagStateVersion: start + 1, changed: true });
    expect(await writeOptIn(store, choice({}))).toEqual({ kind: "stored", flagStateVersion: start + 1, changed: false });
    await writeOptIn(store, choice({ scope: "company", id: "c1", featureKey: "labs" }));
    expect(version()).toBe(start + 2);
    expect(version(otherEnvironmentId)).toBe(start);

    expect(readOptIn(store, environmentId, "beta", "u1", "c1")).toEqual({ userOptedIn: true, companyOptedIn: false });
    expect(readOptIn(store, environmentId, "labs", "u1", "c1")).toEqual({ userOptedIn: false, companyOptedIn: true });
    expect(readOptIn(store, environmentId, "beta")).toEqual({ userOptedIn: false, companyOptedIn: false });
    expect(readOptIn(store, environmentId, "beta", "u2", "")).toEqual({ userOptedIn: false, companyOptedIn: false });
    expect(readOptIn(store, otherEnvironmentId, "beta", "u1")).toEqual({ userOptedIn: false, companyOptedIn: false });
    // A company with the user's id is another entity.
    expect(readOptIn(store, environmentId, "beta", undefined, "u1")).toEqual({ userOptedIn: false, companyOptedIn: false });

    await writeOptIn(store, choice({ featureKey: "labs" }));
    expect(listOptedInFeatures(store, environmentId, "user", "u1")).toEqual(new Set(["beta", "labs"]));
    // Prefix scans stop at the id: "u1" does not find "u10".
    await writeOptIn(store, choice({ id: "u10", featureKey: "beta" }));
    await writeOptIn(store, choice({ featureKey: "beta", optedIn: false }));
    expect(listOptedInFeatures(store, environmentId, "user", "u1")).toEqual(new Set(["labs"]));
    expect(listOptedInFeatures(store, environmentId, "user", undefined)).toEqual(new Set());
    expect(readOptIn(store, environmentId, "beta", "u1").userOptedIn).toBe(false);
  });

  it("refuses features that do not allow opt-in, and unknown environments", async () => {
    expect(await writeOptIn(store, choice({ featureKey: "closed" }))).toEqual({ kind: "no-opt-in-feature" });
    expect(await writeOptIn(store, choice({ featureKey: "nope" }))).toEqual({ kind: "no-opt-in-feature" });
    expect(await writeOptIn(store, choice({ environmentId: "env_nope" }))).toEqual({ kind: "no-environment" });
    await new FeatureRepository(store).archiveFeature(appId, "beta");
    expect(await writeOptIn(store, choice({}))).toEqual({ kind: "no-opt-in-feature" });
  });
});
