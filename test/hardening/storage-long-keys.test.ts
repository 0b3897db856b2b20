/**
 * Composite keys are strings joined with U+0000 (`src/storage/kv.ts` `key()`). lmdb-js's default `ordered-binary`
 * key encoding escaped U+0000 only in strings under 64 characters, so a longer key fell outside its own prefix
 * range and read back as an array: a feature key of 43+ characters was never served, memberships of UUID-sized ids
 * read back empty, opt-ins of long user ids were never seen. The LMDB store now keeps keys as raw UTF-8 bytes;
 * these tests hold both stores to that, directly and over HTTP.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { key, lastKeyPart, prefixRange, type KvStore } from "../../src/storage/kv.js";
import { useAppServer } from "../support/app-server.js";
import { request } from "../support/http.js";
import { NATIVE_MODE } from "../support/server.js";
import { openStore } from "../support/stores.js";

const ENV = "env_AbCdEfGhIjKl";
const UUID_USER = "6f1c2b9e-2f4a-4c7e-9d61-3b8a1f0c5e27";
const UUID_COMPANY = "0b7d3e51-8c2f-4a96-b1e4-7f25c9d08a13";
const LONG_FEATURE = "checkout-redesign-with-new-payment-provider-rollout";

async function withStore(kind: "lmdb" | "log", run: (store: KvStore) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), `switchyard-long-keys-${kind}-`));
  const store = await openStore(kind, dir);
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
  it("LMDB store: a prefix scan finds every key and answers it as a string", () => withStore("lmdb", prefixScanFindsLongKeys));
});

describe(`store keys of 64+ characters over HTTP (${NATIVE_MODE === "0" ? "native-free" : "native"} twin)`, () => {
  const app = useAppServer();

  it(`lists, serves and evaluates a feature whose key is ${LONG_FEATURE.length} characters`, async () => {
    expect((await app.admin("PUT", `/admin/apps/${app.keys.app.id}/features/${LONG_FEATURE}`, {})).status).toBe(200);
    const listed = await app.admin("GET", `/admin/apps/${app.keys.app.id}/features`);
    expect(listed.body.features.map((feature: { key: string }) => feature.key)).toContain(LONG_FEATURE);
    const rules = await request(app.server.url, "GET", "/features", { token: app.keys.production.secretKey });
    expect(rules.body.features.map((feature: { key: string }) => feature.key)).toContain(LONG_FEATURE);
    const evaluated = await request(app.server.url, "GET", "/features/evaluated", { token: app.keys.production.publishableKey });
    expect(Object.keys(evaluated.body.features)).toContain(LONG_FEATURE);
  });

  it(`reads back the membership of UUID user and company ids`, async () => {
    const environment = app.keys.production.id;
    const tracked = await request(app.server.url, "POST", "/company", { token: app.keys.production.secretKey, body: { companyId: UUID_COMPANY, userId: UUID_USER } });
    expect(tracked.status).toBe(200);
    expect((await app.admin("GET", `/admin/environments/${environment}/users/${UUID_USER}`)).body.user.companyIds).toEqual([UUID_COMPANY]);
    expect((await app.admin("GET", `/admin/environments/${environment}/companies/${UUID_COMPANY}`)).body.company.userIds).toEqual([UUID_USER]);
  });

  it(`shows an opt-in of a user with a UUID id`, async () => {
    expect((await app.admin("PUT", `/admin/apps/${app.keys.app.id}/features/beta-editor`, { optInEnabled: true })).status).toBe(200);
    const userId = `${UUID_USER}-0001`;
    const optIn = await request(app.server.url, "POST", "/flags/opt-in", {
      token: app.keys.production.publishableKey,
      body: { key: "beta-editor", optedIn: true, scope: "user", context: { user: { id: userId } } },
    });
    expect(optIn.status).toBe(200);
    const evaluated = await request(app.server.url, "GET", `/features/evaluated?context.user.id=${userId}&key=beta-editor`, { token: app.keys.production.secretKey });
    expect(evaluated.body.features["beta-editor"].optIn.userOptedIn).toBe(true);
  });
});
