/** The two store implementations, opened alike, for tests that run against both (LMDB and native-free's log store). */
import { LogStore } from "../../native-free/storage/log-store.js";
import type { KvStore } from "../../src/storage/kv.js";
import { LmdbStore } from "../../src/storage/lmdb-store.js";

export type StoreKind = "lmdb" | "log";

/** A store of `kind` over `dir`, committing durably as the service does by default. */
export async function openStore(kind: StoreKind, dir: string): Promise<KvStore> {
  return kind === "lmdb" ? new LmdbStore({ path: dir, durability: "commit" }) : await LogStore.open({ path: dir, durability: "commit" });
}
