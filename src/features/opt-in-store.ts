/**
 * End-user opt-ins (API.md §5): which users and companies chose to see a feature that allows opt-in, per environment.
 *
 * Table `optIns`, key `(environmentId, scope, id, featureKey)` → `OptInRecord`. The scope and id come before the
 * feature so that one prefix scan finds everything a user (or company) opted into — what evaluating every feature
 * for one context needs. Only opt-ins are stored; opting out removes the entry. Ids must not contain U+0000 (the
 * key separator); the route refuses them.
 */
import { FeatureRepository } from "./feature-repository.js";
import { key, lastKeyPart, prefixRange, type KvStore } from "../storage/kv.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";

export type OptInScope = "user" | "company";

export interface OptInRecord {
  /** When the choice was made (ISO 8601). */
  at: string;
}

export interface OptInState {
  userOptedIn: boolean;
  companyOptedIn: boolean;
}

export interface OptInChoice {
  environmentId: string;
  appId: string;
  featureKey: string;
  scope: OptInScope;
  /** The user's or company's id, as a string. */
  id: string;
  optedIn: boolean;
}

/** Outcome of `writeOptIn`: the environment's flagStateVersion afterwards, or why nothing was written. */
export type OptInWriteResult =
  | { kind: "stored"; flagStateVersion: number; changed: boolean }
  | { kind: "no-environment" }
  | { kind: "no-opt-in-feature" };

function optInKey(environmentId: string, scope: OptInScope, id: string, featureKey: string): string {
  return key(environmentId, scope, id, featureKey);
}

/** Whether the user and the company opted into one feature (for the evaluator; absent ids count as not opted in). */
export function readOptIn(store: KvStore, environmentId: string, featureKey: string, userId?: string, companyId?: string): OptInState {
  const table = store.table("optIns");
  return {
    userOptedIn: userId !== undefined && userId !== "" && table.get(optInKey(environmentId, "user", userId, featureKey)) !== undefined,
    companyOptedIn:
      companyId !== undefined && companyId !== "" && table.get(optInKey(environmentId, "company", companyId, featureKey)) !== undefined,
  };
}

/** The keys of every feature one user or company opted into: one prefix scan. */
export function listOptedInFeatures(store: KvStore, environmentId: string, scope: OptInScope, id: string | undefined): Set<string> {
  const keys = new Set<string>();
  if (id === undefined || id === "") return keys;
  for (const entry of store.table("optIns").range(prefixRange(environmentId, scope, id))) keys.add(lastKeyPart(entry.key));
  return keys;
}

/**
 * Inside a write: stores (or removes) one choice and bumps the environment's flagStateVersion, so that a client
 * waiting for the returned version sees the choice. A choice that changes nothing bumps nothing. The feature is
 * checked inside the transaction: archiving it or turning opt-in off cannot race the write. Applied as the
 * `opt-in.set` change (src/management), so cluster nodes apply it in log order and agree on versions.
 */
export function applyOptIn(store: KvStore, choice: OptInChoice, at: string): OptInWriteResult {
  const tenancy = new TenancyRepository(store);
  const features = new FeatureRepository(store);
  const table = store.table("optIns");
  const environment = tenancy.getEnvironment(choice.environmentId);
  if (!environment) return { kind: "no-environment" };
  if (!features.getFeature(choice.appId, choice.featureKey)?.optInEnabled) return { kind: "no-opt-in-feature" };
  const entryKey = optInKey(choice.environmentId, choice.scope, choice.id, choice.featureKey);
  const wasOptedIn = table.get(entryKey) !== undefined;
  if (wasOptedIn === choice.optedIn) return { kind: "stored", flagStateVersion: environment.flagStateVersion, changed: false };
  if (choice.optedIn) table.put(entryKey, { at });
  else table.remove(entryKey);
  const flagStateVersion = tenancy.bumpFlagStateVersions([choice.environmentId]).get(choice.environmentId)!;
  return { kind: "stored", flagStateVersion, changed: true };
}

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    optIns: OptInRecord;
  }
}
