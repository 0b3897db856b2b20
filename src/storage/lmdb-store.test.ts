import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOG_STORE_MARKER_FILE } from "./data-dir-kind.js";
import { describeKvStoreContract } from "../../test/support/kv-contract.js";
import { LmdbStore } from "./lmdb-store.js";

describeKvStoreContract("lmdb, commit", (dir) => new LmdbStore({ path: dir, durability: "commit" }));
describeKvStoreContract("lmdb, flush", (dir) => new LmdbStore({ path: dir, durability: "flush" }));
// How the pool's workers open the store.

describe("LmdbStore data dir", () => {
  it("refuses a directory written by the native-free log store", async () => {
    const dir = await mkdtemp(join(tmpdir(), "switchyard-lmdb-"));
    try {
      await writeFile(join(dir, LOG_STORE_MARKER_FILE), "{}\n");
      expect(() => new LmdbStore({ path: dir, durability: "commit" })).toThrow(
        expect.objectContaining({ code: "DATA_DIR_KIND_MISMATCH", message: expect.stringContaining("native-free log") }),
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("LmdbStore data dir names", () => {
  it("opens a directory whose name looks like it has an extension", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-lmdb-"));
    const dotted = join(dir, "data.v2");
    try {
      const store = new LmdbStore({ path: dotted, durability: "commit" });
      await store.write(() => store.table("meta").put("k", 1));
      await store.close();
      expect(readdirSync(dotted)).toContain("data.mdb");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("LmdbStore keys", () => {
  it("rejects keys longer than lmdb-js's key buffer whole, never a cut-short prefix of them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-lmdb-"));
    const store = new LmdbStore({ path: dir, durability: "commit" });
    try {
      const users = store.table("users");
      for (const long of ["k".repeat(5_000), "é".repeat(2_500), `${"k".repeat(4_083)}😀`]) {
        await expect(store.write(() => users.put(long, 1))).rejects.toThrow();
        expect([...users.range({})]).toEqual([]);
      }
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
