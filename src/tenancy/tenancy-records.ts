import type { KeyKind } from "./identifiers.js";

export interface AppRecord {
  id: string;
  name: string;
  trackingKeyHint: string;
  defaultEnvironmentId: string;
  environmentIds: string[];
  createdAt: string;
  /** Data residency: the region the app is pinned to (created through a node with SWITCHYARD_REGION); absent = unpinned. */
  region?: string;
}

export interface EnvironmentRecord {
  id: string;
  appId: string;
  name: string;
  createdAt: string;
  /** Grows by one on every change of any feature visible in this environment. */
  flagStateVersion: number;
  publishableKeyDigest: string;
  /** The publishable key in full (it is public, API.md §1); masked only in environments made before that. */
  publishableKeyHint: string;
  secretKeyDigest: string;
  secretKeyHint: string;
}

/** The `keys` table maps a key's digest to what it unlocks. */
export interface KeyRecord {
  kind: KeyKind;
  appId: string;
  /** For a tracking key: the app's default environment at the time of lookup is used instead. */
  environmentId: string;
}

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    apps: AppRecord;
    environments: EnvironmentRecord;
    keys: KeyRecord;
  }
}
