/** A real LMDB store in a temp dir for unit tests, made before and closed and removed after, as every such test needs. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { LmdbStore } from "../../src/storage/lmdb-store.js";

export interface TempLmdbStore {
  readonly store: LmdbStore;
  readonly dir: string;
}

/**
 * A fresh store for each test (`each`) or one for the whole file (`all`), in a temp dir named from `prefix`. Its hooks
 * are registered where this is called: the file's own `before` hooks registered after it see the store, and its own
 * `after` hooks run before the store is closed.
 */
export function useTempLmdbStore(prefix: string, scope: "each" | "all" = "each"): TempLmdbStore {
  const temp: { store?: LmdbStore; dir?: string } = {};
  const [before, after] = scope === "each" ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    temp.dir = await mkdtemp(join(tmpdir(), prefix));
    temp.store = new LmdbStore({ path: temp.dir, durability: "commit" });
  });
  after(async () => {
    await temp.store?.close();
    if (temp.dir !== undefined) await rm(temp.dir, { recursive: true, force: true });
  });
  return {
    get store() {
      if (temp.store === undefined) throw new Error("useTempLmdbStore: the store exists only inside tests and hooks");
      return temp.store;
    },
    get dir() {
      if (temp.dir === undefined) throw new Error("useTempLmdbStore: the dir exists only inside tests and hooks");
      return temp.dir;
    },
  };
}
