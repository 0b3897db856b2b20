/**
 * KNOWN BUG (src/storage/lmdb-store.ts, not fixed here: outside the hardening brief's areas) — found by the
 * key-isolation matrix, whose long markers made acknowledged opt-ins vanish.
 *
 * Composite keys are strings joined with U+0000 (`src/storage/kv.ts` `key()`), and LMDB tables use lmdb-js's
 * `ordered-binary` key encoding. ordered-binary 1.6.3 encodes a string shorter than 64 characters with U+0000
 * escaped, but writes a string of 64 characters or more raw (its fast path), and reads raw U+0000 back as an array
 * separator. So a key of 64+ characters (1) is not inside the range of its own prefix (`prefixRange()` bounds are
 * short, hence escaped, and sort after the raw bytes) and (2) comes back from a range scan as an array, not a string.
 * What that does over HTTP, native twin only (the log store compares plain UTF-8 and is fine):
 *   - a feature whose key is 43+ characters is created (200) but never listed, served or evaluated;
 *   - memberships of UUID-sized user and company ids are stored but `companyIds` / `userIds` read back empty;
 *   - an opt-in of a user id of ~40+ characters is acknowledged but never seen by evaluation.
 * Suggested fix: store keys as their UTF-8 bytes (`keyEncoding: "binary"`, Buffer.from(key, "utf8") on the way in,
 * toString("utf8") on the way out): that is exactly the order kv.ts promises; existing data dirs need a migration
 * (schema-version.ts). These tests are marked `.fails` where the bug bites; remove the marks once it is fixed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LogStore } from "../../native-free/storage/log-store.js";
import { key, lastKeyPart, prefixRange, type KvStore } from "../../src/storage/kv.js";
import { LmdbStore } from "../../src/storage/lmdb-store.js";
import { createApp, request } from "../support/http.js";
import { NATIVE_MODE, startServer, type TestServer } from "../support/server.js";

const ENV = "env_AbCdEfGhIjKl";
const UUID_USER = "6f1c2b9e-2f4a-4c7e-9d61-3b8a1f0c5e27";
const UUID_COMPANY = "0b7d3e51-8c2f-4a96-b1e4-7f25c9d08a13";
const LONG_FEATURE = "checkout-redesign-with-new-payment-provider-rollout";

async function withStore(kind: "lmdb" | "log", run: (store: KvStore) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), `switchyard-long-keys-${kind}-`));
  const store = kind === "lmdb" ? new LmdbStore({ path: dir, durability: "commit" }) : await LogStore.open({ path: dir, durability: "commit" });
  try {
    await run(store);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function prefixScanFindsLongKeys(store: KvStore): Promise<void> {
  const ids = ["short", UUID_USER, "x".repeat(100)];
  await store.write(() => {
    for (const id of ids) store.table("optIns").put(key(ENV, "user", id, "beta-editor"), { at: "now" });
  });
  for (const id of ids) {
    const found = [...store.table("optIns").range(prefixRange(ENV, "user", id))];
    expect(found.map((entry) => typeof entry.key), id).toEqual(["string"]);
    expect(lastKeyPart(found[0]!.key), id).toBe("beta-editor");
  }
}

describe("store keys of 64+ characters (KvStore)", () => {
  it("log store: a prefix scan finds every key and answers it as a string", () => withStore("log", prefixScanFindsLongKeys));
  it.fails("LMDB store: a prefix scan finds every key and answers it as a string [KNOWN BUG]", () => withStore("lmdb", prefixScanFindsLongKeys));
});

describe(`store keys of 64+ characters over HTTP (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  let server: TestServer;
  let keys: Awaited<ReturnType<typeof createApp>>;
  const bites = NATIVE_MODE !== "0";
  const known = bites ? it.fails : it;
  const admin = (method: string, path: string, body?: unknown) => request(server.url, method, path, { token: server.adminToken, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    server = await startServer();
    keys = await createApp(server.url, server.adminToken);
  });
  afterAll(async () => {
    await server.stop();
  });

  known(`lists, serves and evaluates a feature whose key is ${LONG_FEATURE.length} characters${bites ? " [KNOWN BUG]" : ""}`, async () => {
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/${LONG_FEATURE}`, {})).status).toBe(200);
    const listed = await admin("GET", `/admin/apps/${keys.app.id}/features`);
    expect(listed.body.features.map((feature: { key: string }) => feature.key)).toContain(LONG_FEATURE);
    const rules = await request(server.url, "GET", "/features", { token: keys.production.secretKey });
    expect(rules.body.features.map((feature: { key: string }) => feature.key)).toContain(LONG_FEATURE);
    const evaluated = await request(server.url, "GET", "/features/evaluated", { token: keys.production.publishableKey });
    expect(Object.keys(evaluated.body.features)).toContain(LONG_FEATURE);
  });

  known(`reads back the membership of UUID user and company ids${bites ? " [KNOWN BUG]" : ""}`, async () => {
    const environment = keys.production.id;
    const tracked = await request(server.url, "POST", "/company", { token: keys.production.secretKey, body: { companyId: UUID_COMPANY, userId: UUID_USER } });
    expect(tracked.status).toBe(200);
    expect((await admin("GET", `/admin/environments/${environment}/users/${UUID_USER}`)).body.user.companyIds).toEqual([UUID_COMPANY]);
    expect((await admin("GET", `/admin/environments/${environment}/companies/${UUID_COMPANY}`)).body.company.userIds).toEqual([UUID_USER]);
  });

  known(`shows an opt-in of a user with a UUID id${bites ? " [KNOWN BUG]" : ""}`, async () => {
    expect((await admin("PUT", `/admin/apps/${keys.app.id}/features/beta-editor`, { optInEnabled: true })).status).toBe(200);
    const userId = `${UUID_USER}-0001`;
    const optIn = await request(server.url, "POST", "/flags/opt-in", {
      token: keys.production.publishableKey,
      body: { key: "beta-editor", optedIn: true, scope: "user", context: { user: { id: userId } } },
    });
    expect(optIn.status).toBe(200);
    const evaluated = await request(server.url, "GET", `/features/evaluated?context.user.id=${userId}&key=beta-editor`, { token: keys.production.secretKey });
    expect(evaluated.body.features["beta-editor"].optIn.userOptedIn).toBe(true);
  });
});
