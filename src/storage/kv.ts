/**
 * The storage seam. Everything above it speaks this interface; `lmdb-store.ts` implements it over LMDB and
 * `native-free/storage/` implements it in pure JavaScript. Both must pass `test/support/kv-contract.ts`.
 *
 * Keys are strings compared by their UTF-8 bytes (LMDB's order). Composite keys are built with `key()` so that a
 * prefix scan (`prefixRange`) finds exactly the keys that start with the given parts. Values are any
 * msgpack-encodable value; stores encode them with msgpackr.
 */
export interface KvEntry<V> {
  key: string;
  value: V;
}

export interface RangeOptions {
  /** Inclusive lower bound. */
  start?: string;
  /** Exclusive upper bound. */
  end?: string;
  reverse?: boolean;
  limit?: number;
}

/** One named table. Reads are synchronous and see committed data (and, inside `write`, the transaction's own). */
export interface KvTable<V = unknown> {
  get(key: string): V | undefined;
  range(options: RangeOptions): Iterable<KvEntry<V>>;
  /** Only inside `KvStore.write`. */
  put(key: string, value: V): void;
  /** Only inside `KvStore.write`. */
  remove(key: string): void;
}

export type DurabilityMode = "commit" | "flush";

export interface KvStore {
  readonly kind: "lmdb" | "log";
  /**
   * The store holding the `trackingLog` table when it is an environment of its own (LMDB: so that appends never wait
   * behind a projection's write transaction); absent when this store holds it. Written by its own `write`.
   */
  readonly trackingLog?: KvStore;
  /**
   * A table, its values typed by its name (TableValues). A table holding several kinds of value under different key
   * shapes may be opened as one of them: `table<"feedback", number>("feedback")`.
   */
  table<N extends TableName, V extends TableValue<N> = TableValue<N>>(name: N): KvTable<V>;
  /**
   * Runs `apply` in one atomic write transaction, serialised with every other writer (other threads and processes
   * included for LMDB). Writes from calls made in the same event-loop turn share one commit (group commit). The
   * promise resolves after the commit — and after the data is flushed to disk when durability is `flush`.
   * `apply` must not throw: validate before writing. If it does throw, the promise rejects.
   */
  write<T>(apply: () => T): Promise<T>;
  /** Makes later reads see the latest commit of other threads/processes at once (LMDB renews its snapshot lazily). */
  refresh(): void;
  /**
   * Copies the whole store, as of one point of its commit order, into the existing empty `directory` while readers
   * and writers go on (API.md §13.1's online backup). Absent where the store cannot do it.
   */
  copyTo?(directory: string): Promise<void>;
  close(): Promise<void>;
}

export interface KvStoreOptions {
  /** Directory holding the data. */
  path: string;
  durability: DurabilityMode;
}

/** Every table the service keeps. */
export const TABLES = [
  "meta",
  "apps",
  "environments",
  "keys",
  "features",
  "targeting",
  "history",
  "users",
  "companies",
  "memberships",
  "events",
  "featureEvents",
  "feedback",
  "promptEvents",
  "optIns",
  "counters",
  "aggregates",
  "members",
  "credentials",
  "audit",
  "stages",
  "segments",
  "surveys",
  // Last, so that stores which number tables by position keep their numbers.
  "entityUpdates",
  "trackingLog",
  // The flat form of users' and companies' attributes beside their records (src/tracking/remote-contexts.ts).
  "remoteContexts",
  // Governance (API.md §15): each environment's approval policy, and change requests.
  "policies",
  "changeRequests",
  // Guarded rollouts (API.md §17): the rollouts, the active one per feature, and what the exposure projection derives.
  "rollouts",
  "activeRollouts",
  "rolloutUnits",
  "rolloutTallies",
  // Webhooks (API.md §16): each app's webhooks and the outbox of their deliveries.
  "webhooks",
  "webhookDeliveries",
] as const;
export type TableName = (typeof TABLES)[number];

/**
 * Each table's value type, by name. The room that owns a table declares it beside its records (a `declare module`
 * of this file), so that this room imports none of them; `meta` is this room's own.
 */
export interface TableValues {
  /** Positions, stamps and flags of the store itself (schema version, tracking log positions, cluster positions). */
  meta: number | boolean;
}

/** What a table holds; `never` for a table no room declared, so that using it does not compile. */
export type TableValue<N extends TableName> = N extends keyof TableValues ? TableValues[N] : never;

const SEPARATOR = "\u0000";
const AFTER_SEPARATOR = "\u0001";

/** A composite key. Parts must not contain U+0000 except the last one. */
export function key(...parts: (string | number)[]): string {
  return parts.join(SEPARATOR);
}

/** Bounds selecting every key that starts with `parts` followed by a separator. */
export function prefixRange(...parts: (string | number)[]): { start: string; end: string } {
  const prefix = parts.join(SEPARATOR);
  return { start: prefix + SEPARATOR, end: prefix + AFTER_SEPARATOR };
}

/** The first part of a composite key (the environment, in every per-environment table). */
export function firstKeyPart(compositeKey: string): string {
  const end = compositeKey.indexOf(SEPARATOR);
  return end === -1 ? compositeKey : compositeKey.slice(0, end);
}

/** The last part of a composite key. */
export function lastKeyPart(compositeKey: string): string {
  return compositeKey.slice(compositeKey.lastIndexOf(SEPARATOR) + 1);
}

/** Zero-padded so that sequence numbers sort as strings in numeric order. */
export function sequenceKeyPart(sequence: number): string {
  return sequence.toString().padStart(16, "0");
}

/** Compares two keys by their UTF-8 bytes, LMDB's order. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
