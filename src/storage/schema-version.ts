import type { KvStore } from "./kv.js";

/** The layout version of stored records; a later release migrates from older versions here. */
export const SCHEMA_VERSION = 4;
/** Version 1 (pre-release) kept LMDB keys in lmdb-js's ordered-binary encoding; nothing converts it. */
const OLDEST_READABLE = 2;

/**
 * Stamps a new store, and refuses one written by a newer release rather than misreading it. Version 2 differs from
 * 3 only in how LMDB values were encoded (msgpackr records), which this release still reads: its stamp is raised so
 * that a version 2 build, which cannot read the plain maps written from now on, refuses the data dir. Version 4
 * acknowledges tracking once it is in the tracking log and projects the rest later: a version 3 build would never
 * project what the log holds, so it must refuse the dir.
 */
export async function migrateStore(store: KvStore): Promise<void> {
  const meta = store.table<number>("meta");
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
  if (stored < SCHEMA_VERSION) await store.write(() => meta.put("schemaVersion", SCHEMA_VERSION));
}
