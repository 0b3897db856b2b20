import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOG_STORE_MARKER_FILE } from "./data-dir-kind.js";
import { describeKvStoreContract } from "./kv.contract.js";
import { LmdbStore } from "./lmdb-store.js";

describeKvStoreContract("lmdb, commit", (dir) => new LmdbStore({ path: dir, durability: "commit" }));
describeKvStoreContract("lmdb, flush", (dir) => new LmdbStore({ path: dir, durability: "flush" }));

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
