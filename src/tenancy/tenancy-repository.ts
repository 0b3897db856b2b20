import { key, type KvStore } from "../storage/kv.js";
import { digestKey, maskKey, newAppId, newEnvironmentId, newKey } from "./identifiers.js";
import type { AppRecord, EnvironmentRecord, KeyRecord } from "./records.js";

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

/** Apps, environments and their keys. Clear-text keys leave this module only in what creation and rotation return. */
export class TenancyRepository {
  constructor(private readonly store: KvStore) {}

  private get apps() {
    return this.store.table<AppRecord>("apps");
  }
  private get environments() {
    return this.store.table<EnvironmentRecord>("environments");
  }
  private get keys() {
    return this.store.table<KeyRecord>("keys");
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

  async createApp(name: string, now = new Date()): Promise<IssuedApp> {
    const appId = newAppId();
    const trackingKey = newKey("tracking");
    const issued = DEFAULT_ENVIRONMENTS.map((environmentName) => this.issueEnvironment(appId, environmentName));
    const defaultEnvironment = issued[0]!;
    const app: AppRecord = {
      id: appId,
      name,
      trackingKeyHint: maskKey(trackingKey),
      defaultEnvironmentId: defaultEnvironment.issued.id,
      environmentIds: issued.map((environment) => environment.issued.id),
      createdAt: now.toISOString(),
    };
    await this.store.write(() => {
      this.apps.put(key(appId), app);
      this.keys.put(key(digestKey(trackingKey)), { kind: "tracking", appId, environmentId: app.defaultEnvironmentId });
      for (const { record } of issued) this.writeEnvironment(record);
    });
    return { app, trackingKey, environments: issued.map((environment) => environment.issued) };
  }

  /** Adds an environment to an app; undefined when the app does not exist. */
  async createEnvironment(appId: string, name: string): Promise<IssuedEnvironment | undefined> {
    const { record, issued } = this.issueEnvironment(appId, name);
    const created = await this.store.write(() => {
      const app = this.apps.get(key(appId));
      if (!app) return false;
      this.apps.put(key(appId), { ...app, environmentIds: [...app.environmentIds, record.id] });
      this.writeEnvironment(record);
      return true;
    });
    return created ? issued : undefined;
  }

  /** Replaces an environment's key of one kind; the old key stops working when this resolves. */
  async rotateKey(environmentId: string, kind: "publishable" | "secret"): Promise<{ key: string; revokedDigest: string } | undefined> {
    return this.store.write(() => {
      const environment = this.environments.get(key(environmentId));
      if (!environment) return undefined;
      const fresh = newKey(kind, environment.name);
      const digest = digestKey(fresh);
      const revokedDigest = kind === "publishable" ? environment.publishableKeyDigest : environment.secretKeyDigest;
      this.keys.remove(key(revokedDigest));
      this.keys.put(key(digest), { kind, appId: environment.appId, environmentId });
      const updated: EnvironmentRecord =
        kind === "publishable"
          ? { ...environment, publishableKeyDigest: digest, publishableKeyHint: maskKey(fresh) }
          : { ...environment, secretKeyDigest: digest, secretKeyHint: maskKey(fresh) };
      this.environments.put(key(environmentId), updated);
      return { key: fresh, revokedDigest };
    });
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

  private issueEnvironment(appId: string, name: string): { record: EnvironmentRecord; issued: IssuedEnvironment } {
    const id = newEnvironmentId();
    const publishableKey = newKey("publishable", name);
    const secretKey = newKey("secret", name);
    const record: EnvironmentRecord = {
      id,
      appId,
      name,
      createdAt: new Date().toISOString(),
      flagStateVersion: 0,
      publishableKeyDigest: digestKey(publishableKey),
      publishableKeyHint: maskKey(publishableKey),
      secretKeyDigest: digestKey(secretKey),
      secretKeyHint: maskKey(secretKey),
    };
    return { record, issued: { id, name, publishableKey, secretKey } };
  }

  private writeEnvironment(record: EnvironmentRecord): void {
    this.environments.put(key(record.id), record);
    this.keys.put(key(record.publishableKeyDigest), { kind: "publishable", appId: record.appId, environmentId: record.id });
    this.keys.put(key(record.secretKeyDigest), { kind: "secret", appId: record.appId, environmentId: record.id });
  }
}
