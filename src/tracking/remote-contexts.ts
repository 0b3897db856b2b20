/**
 * The flat form of each stored user's and company's attributes, kept beside its record for remote context (API.md
 * §3): the pairs evaluation's fast path reads, so that a request does not decode the whole record and flatten its
 * attributes again (a visible share of a small evaluation, (docs/BENCHMARKS.md, "Figures behind the code")). Written in the transaction
 * that writes the record, whenever its attributes change; a record with no flat form beside it (written by a build
 * before this one) is read and flattened as before.
 */
import { flattenContext } from "../evaluation/flatten-context.js";
import type { Attributes } from "../schemas/tracking-fields.js";
import { firstKeyPart, key, type KvStore } from "../storage/kv.js";
import type { StoreUpgrade } from "../storage/schema-version.js";
import type { CompanyRecord, UserRecord } from "./tracking-records.js";

export type EntityKind = "user" | "company";

/**
 * `[path, value, path, value, …]` as flattening gives them under `user.` / `company.`, or false when a key somewhere
 * holds "." or is "" (or an object is not a plain one): then two paths can flatten alike, and only the nested merge
 * settles which one wins.
 */
export type RemoteContext = string[] | false;

/** Where the flat form of a user or company lives in the `remoteContexts` table. */
export function remoteContextKey(environmentId: string, kind: EntityKind, id: string): string {
  return key(environmentId, kind === "user" ? "u" : "c", id);
}

/** The flat form of `attributes` (see RemoteContext). */
export function remoteContextOf(kind: EntityKind, attributes: Attributes): RemoteContext {
  if (!isFlatSafe(attributes, 0)) return false;
  const pairs: string[] = [];
  for (const [path, value] of flattenContext({ [kind]: attributes })) pairs.push(path, value);
  return pairs;
}

/** Inside a write: stores the flat form of a record's attributes beside it. */
export function putRemoteContext(store: KvStore, environmentId: string, kind: EntityKind, id: string, attributes: Attributes): void {
  store.table("remoteContexts").put(remoteContextKey(environmentId, kind, id), remoteContextOf(kind, attributes));
}

/** The stored flat form; undefined when none is stored (an unknown id, or a record older than flat forms). */
export function readRemoteContext(store: KvStore, environmentId: string, kind: EntityKind, id: string): RemoteContext | undefined {
  return store.table("remoteContexts").get(remoteContextKey(environmentId, kind, id));
}

/** Schema version 5: every user and company stored before it gets its flat form. */
export const REMOTE_CONTEXTS_UPGRADE: StoreUpgrade = {
  to: 5,
  apply(store) {
    for (const kind of ["user", "company"] as const) {
      for (const { key: recordKey, value } of store.table(kind === "user" ? "users" : "companies").range({})) {
        // Record keys are key(environmentId, id).
        putRemoteContext(store, firstKeyPart(recordKey), kind, value.id, value.attributes);
      }
    }
  },
};

/** Nesting deeper than flattening follows is left to the nested path. */
const MAX_SAFE_DEPTH = 64;

function isFlatSafe(value: unknown, depth: number): boolean {
  if (typeof value !== "object" || value === null) return true;
  if (depth > MAX_SAFE_DEPTH) return false;
  if (Array.isArray(value)) return value.every((item) => isFlatSafe(item, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return false;
  for (const key of Object.keys(value)) {
    if (key === "" || key.includes(".") || key === "__proto__") return false;
    if (!isFlatSafe((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    remoteContexts: RemoteContext;
  }
}
