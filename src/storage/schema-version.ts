import type { KvStore } from "./kv.js";

/** The layout version of stored records; a later release migrates from older versions here. */
export const SCHEMA_VERSION = 5;
/** Version 1 (pre-release) kept LMDB keys in lmdb-js's ordered-binary encoding; nothing converts it. */
const OLDEST_READABLE = 2;

/**
 * Stamps a new store, and refuses one written by a newer release rather than misreading it. Version 2 differs from
 * 3 only in how LMDB values were encoded (msgpackr records), which this release still reads: its stamp is raised so
 * that a version 2 build, which cannot read the plain maps written from now on, refuses the data dir. Version 4
 * acknowledges tracking once it is in the tracking log and projects the rest later: a version 3 build would never
 * project what the log holds, so it must refuse the dir. Version 5 keeps the flat form of each user's and company's
 * attributes beside its record (src/tracking/remote-contexts.ts, written for older records by its upgrade): a version
 * 4 build would change attributes without it, so it must refuse the dir too.
 */
export async function migrateStore(store: KvStore, upgrades: readonly StoreUpgrade[]): Promise<void> {
  const meta = store.table<"meta", number>("meta");
  const stored = meta.get("schemaVersion");
  if (stored === undefined) {
    await store.write(() => {
      if (meta.get("schemaVersion") === undefined) meta.put("schemaVersion", SCHEMA_VERSION);
    });
    return;
  }
  if (stored < OLDEST_READABLE) {
    throw new Error(`The data dir holds schema version ${stored}, written by a pre-release build; start from an empty data dir.`);
  }
  if (stored > SCHEMA_VERSION) {
    throw new Error(`The data dir holds schema version ${stored}; this release understands up to ${SCHEMA_VERSION}.`);
  }
  if (stored < SCHEMA_VERSION) {
    await store.write(() => {
      for (const upgrade of upgrades) if (upgrade.to > stored) upgrade.apply(store);
      meta.put("schemaVersion", SCHEMA_VERSION);
    });
  }
}

/**
 * What a data dir stamped below `to` needs to become that version, applied in the transaction that raises its stamp.
 * Upgrades that rewrite domain data live with their domain and are handed in by the composition (src/composition/).
 */
export interface StoreUpgrade {
  to: number;
  apply(store: KvStore): void;
}
