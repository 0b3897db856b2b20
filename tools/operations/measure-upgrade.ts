/**
 * Times the schema-4 → 5 upgrade (the flat form of every stored user's and company's attributes written beside its
 * record, src/tracking/remote-contexts.ts) on an LMDB store of N users and N companies in a temp dir, written as a
 * version 4 release left them.
 *
 *   npm run build && node dist/tools/operations/measure-upgrade.js [N=500000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STORE_UPGRADES } from "../../src/composition/store-upgrades.js";
import { LmdbStore } from "../../src/storage/lmdb-store.js";
import { migrateStore, SCHEMA_VERSION } from "../../src/storage/schema-version.js";
import type { CompanyRecord, UserRecord } from "../../src/tracking/tracking-records.js";
import { companyKey, userKey } from "../../src/tracking/users-companies.js";

const count = Number(process.argv[2] ?? 500_000);
const BATCH = 50_000;
const ENVIRONMENT = "env-upgrade";

const directory = mkdtempSync(join(tmpdir(), "switchyard-upgrade-"));
const store = new LmdbStore({ path: directory, durability: "commit" });
try {
  for (let from = 0; from < count; from += BATCH) {
    await store.write(() => {
      for (let index = from; index < Math.min(count, from + BATCH); index++) {
        const user: UserRecord = { id: `u${index}`, attributes: { name: `User ${index}`, role: "admin" }, firstSeen: 1, lastSeen: 1, lastCompanyId: null, lastCompanyAt: null };
        const company: CompanyRecord = { id: `c${index}`, attributes: { name: `Company ${index}`, plan: "pro", seats: index % 300 }, firstSeen: 1, lastSeen: 1 };
        store.table("users").put(userKey(ENVIRONMENT, user.id), user);
        store.table("companies").put(companyKey(ENVIRONMENT, company.id), company);
      }
    });
  }
  await store.write(() => store.table("meta").put("schemaVersion", 4));
  const started = performance.now();
  await migrateStore(store, STORE_UPGRADES);
  const seconds = (performance.now() - started) / 1000;
  const written = [...store.table("remoteContexts").range({})].length;
  console.log(JSON.stringify({ users: count, companies: count, flatFormsWritten: written, schemaVersion: store.table("meta").get("schemaVersion") === SCHEMA_VERSION ? SCHEMA_VERSION : "unexpected", seconds: Number(seconds.toFixed(2)) }));
} finally {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
}
