import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { afterEach, beforeEach, expect, it } from "vitest";
import { LmdbStore } from "./lmdb-store.js";
import { migrateStore, SCHEMA_VERSION } from "./schema-version.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "switchyard-schema-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes a data dir the way a schema version 2 build did: msgpackr records, stamped 2 (or `stamp`). */
async function writeOldStore(stamp: number): Promise<void> {
  const root = open({ path: dir, noSubdir: false, maxDbs: 30, encoding: "msgpack", sharedStructuresKey: undefined });
  const options = { encoding: "msgpack", keyEncoding: "binary" } as const;
  const meta = root.openDB<unknown, Buffer>({ name: "meta", ...options });
  const users = root.openDB<unknown, Buffer>({ name: "users", ...options });
  await root.transaction(() => {
    meta.putSync(Buffer.from("schemaVersion"), stamp);
    users.putSync(Buffer.from("env\u0000u1"), { id: "u1", attributes: { plan: "pro", seats: 3, nested: { a: [1, { b: true }] } }, firstSeen: 1, lastSeen: null });
  });
  await root.close();
}

it("stamps a new store with the current version", async () => {
  const store = new LmdbStore({ path: dir, durability: "commit" });
  try {
    await migrateStore(store, []);
    expect(store.table("meta").get("schemaVersion")).toBe(SCHEMA_VERSION);
  } finally {
    await store.close();
  }
});

it("reads version 2 records as they were and raises the stamp, so a version 2 build refuses the dir from then on", async () => {
  await writeOldStore(2);
  const store = new LmdbStore({ path: dir, durability: "commit" });
  try {
    await migrateStore(store, []);
    expect(store.table("meta").get("schemaVersion")).toBe(SCHEMA_VERSION);
    expect(store.table("users").get("env\u0000u1")).toEqual({ id: "u1", attributes: { plan: "pro", seats: 3, nested: { a: [1, { b: true }] } }, firstSeen: 1, lastSeen: null });
    await store.write(() => store.table("users").put("env\u0000u2", { id: "u2", attributes: { plan: "free" } }));
    expect(store.table("users").get("env\u0000u2")).toEqual({ id: "u2", attributes: { plan: "free" } });
  } finally {
    await store.close();
  }
});

it("refuses data dirs of a newer release and of pre-release builds", async () => {
  await writeOldStore(SCHEMA_VERSION + 1);
  let store = new LmdbStore({ path: dir, durability: "commit" });
  await expect(migrateStore(store, [])).rejects.toThrow(new RegExp(`schema version ${SCHEMA_VERSION + 1}; this release understands up to ${SCHEMA_VERSION}`));
  await store.close();
  await rm(dir, { recursive: true, force: true });
  await writeOldStore(1);
  store = new LmdbStore({ path: dir, durability: "commit" });
  await expect(migrateStore(store, [])).rejects.toThrow(/pre-release/);
  await store.close();
});
