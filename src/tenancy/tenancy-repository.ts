import { key, type KvStore } from "../storage/kv.js";
import { digestKey, maskKey, newAppId, newEnvironmentId, newKey } from "./identifiers.js";
import type { AppRecord, EnvironmentRecord, KeyRecord } from "./tenancy-records.js";

export const DEFAULT_ENVIRONMENTS = ["production", "development"] as const;

export interface IssuedEnvironment {
  id: string;
  name: string;
  publishableKey: string;
  secretKey: string;
}

export interface IssuedApp {
  app: AppRecord;
  trackingKey: string;
  environments: IssuedEnvironment[];
}

/**
 * Apps, environments and their keys. Clear-text keys leave this module only in what planning, creation and rotation
 * return. The service changes them through `src/management/` (one change, applied with its audit entry); the
 * one-transaction conveniences (`createApp`…) serve tests and tools.
 */
export class TenancyRepository {
  constructor(private readonly store: KvStore) {}

  private get apps() {
    return this.store.table("apps");
  }
  private get environments() {
    return this.store.table("environments");
  }
  private get keys() {
    return this.store.table("keys");
  }

  getApp(appId: string): AppRecord | undefined {
    return this.apps.get(key(appId));
  }

  listApps(): AppRecord[] {
    return [...this.apps.range({})].map((entry) => entry.value);
  }

  getEnvironment(environmentId: string): EnvironmentRecord | undefined {
    return this.environments.get(key(environmentId));
  }

  listEnvironments(): EnvironmentRecord[] {
    return [...this.environments.range({})].map((entry) => entry.value);
  }

  lookupKey(digest: string): KeyRecord | undefined {
    return this.keys.get(key(digest));
  }

  listKeys(): { digest: string; record: KeyRecord }[] {
    return [...this.keys.range({})].map((entry) => ({ digest: entry.key, record: entry.value }));
  }

  /** Creates an app with its default environments in one transaction (tests and tools; the service goes through src/management). */
  async createApp(name: string, now = new Date()): Promise<IssuedApp> {
    const planned = planApp(name, now.toISOString());
    await this.store.write(() => this.insertApp(planned.app, planned.trackingKeyDigest, planned.environments.map((environment) => environment.record)));
    return { app: planned.app, trackingKey: planned.trackingKey, environments: planned.environments.map((environment) => environment.issued) };
  }

  /** Adds an environment to an app; undefined when the app does not exist (tests and tools). */
  async createEnvironment(appId: string, name: string): Promise<IssuedEnvironment | undefined> {
    const { record, issued } = planEnvironment(appId, name, new Date().toISOString());
    const created = await this.store.write(() => this.insertEnvironment(record));
    return created ? issued : undefined;
  }

  /** Replaces an environment's key of one kind; the old key stops working when this resolves (tests and tools). */
  async rotateKey(environmentId: string, kind: "publishable" | "secret"): Promise<{ key: string; revokedDigest: string } | undefined> {
    return this.store.write(() => {
      const environment = this.environments.get(key(environmentId));
      if (!environment) return undefined;
      const fresh = newKey(kind, environment.name);
      const replaced = this.replaceKey(environmentId, kind, digestKey(fresh), kind === "publishable" ? fresh : maskKey(fresh));
      return replaced && { key: fresh, revokedDigest: replaced.revokedDigest };
    });
  }

  // Writes below run inside a transaction: the management apply path's, or one of the conveniences above.

  insertApp(app: AppRecord, trackingKeyDigest: string, environments: readonly EnvironmentRecord[]): void {
    this.apps.put(key(app.id), app);
    this.keys.put(key(trackingKeyDigest), { kind: "tracking", appId: app.id, environmentId: app.defaultEnvironmentId });
    for (const record of environments) this.writeEnvironment(record);
  }

  /** False when the environment's app does not exist. */
  insertEnvironment(record: EnvironmentRecord): boolean {
    const app = this.apps.get(key(record.appId));
    if (!app) return false;
    this.apps.put(key(app.id), { ...app, environmentIds: [...app.environmentIds, record.id] });
    this.writeEnvironment(record);
    return true;
  }

  /** Points an environment's key of one kind at a new digest and drops the old one; undefined when there is no such environment. */
  replaceKey(environmentId: string, kind: "publishable" | "secret", digest: string, hint: string): { environment: EnvironmentRecord; revokedDigest: string } | undefined {
    const environment = this.environments.get(key(environmentId));
    if (!environment) return undefined;
    const revokedDigest = kind === "publishable" ? environment.publishableKeyDigest : environment.secretKeyDigest;
    this.keys.remove(key(revokedDigest));
    this.keys.put(key(digest), { kind, appId: environment.appId, environmentId });
    const updated: EnvironmentRecord =
      kind === "publishable"
        ? { ...environment, publishableKeyDigest: digest, publishableKeyHint: hint }
        : { ...environment, secretKeyDigest: digest, secretKeyHint: hint };
    this.environments.put(key(environmentId), updated);
    return { environment: updated, revokedDigest };
  }

  /** Inside a write: bumps and returns the environments' flagStateVersion. */
  bumpFlagStateVersions(environmentIds: readonly string[]): Map<string, number> {
    const versions = new Map<string, number>();
    for (const environmentId of environmentIds) {
      const environment = this.environments.get(key(environmentId));
      if (!environment) continue;
      const flagStateVersion = environment.flagStateVersion + 1;
      this.environments.put(key(environmentId), { ...environment, flagStateVersion });
      versions.set(environmentId, flagStateVersion);
    }
    return versions;
  }

  private writeEnvironment(record: EnvironmentRecord): void {
    this.environments.put(key(record.id), record);
    this.keys.put(key(record.publishableKeyDigest), { kind: "publishable", appId: record.appId, environmentId: record.id });
    this.keys.put(key(record.secretKeyDigest), { kind: "secret", appId: record.appId, environmentId: record.id });
  }
}

/** An app with its default environments, ids and keys drawn now; clear keys only in `trackingKey` and `issued`. */
export function planApp(name: string, at: string, region?: string) {
  const appId = newAppId();
  const trackingKey = newKey("tracking");
  const environments = DEFAULT_ENVIRONMENTS.map((environmentName) => planEnvironment(appId, environmentName, at));
  const app: AppRecord = {
    id: appId,
    name,
    trackingKeyHint: maskKey(trackingKey),
    defaultEnvironmentId: environments[0]!.record.id,
    environmentIds: environments.map((environment) => environment.record.id),
    createdAt: at,
    ...(region !== undefined ? { region } : {}),
  };
  return { app, trackingKey, trackingKeyDigest: digestKey(trackingKey), environments };
}

/** An environment with its id and keys drawn now: the record (digests only) and the clear keys to show once. */
export function planEnvironment(appId: string, name: string, at: string): { record: EnvironmentRecord; issued: IssuedEnvironment } {
  const id = newEnvironmentId();
  const publishableKey = newKey("publishable", name);
  const secretKey = newKey("secret", name);
  const record: EnvironmentRecord = {
    id,
    appId,
    name,
    createdAt: at,
    flagStateVersion: 0,
    publishableKeyDigest: digestKey(publishableKey),
    // Publishable keys are public (API.md §1): kept in full so reads and the dashboard can show them.
    publishableKeyHint: publishableKey,
    secretKeyDigest: digestKey(secretKey),
    secretKeyHint: maskKey(secretKey),
  };
  return { record, issued: { id, name, publishableKey, secretKey } };
}
