/**
 * What remote context costs a request to read (issue 33, lead 3), in one process on a real LMDB store in a temp dir:
 * the stored user and company of a random traffic pair (10,000 users × 200 companies, as the load's), read as
 * records, decoded and flattened (how evaluation read them before the flat form), against reading the flat form kept
 * beside each record (how it reads them now). No cache in front of either: the load's users come back too seldom.
 *
 *   node dist/bench/storage/remote-context-read.js [--seconds N]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { StoredEntity } from "../../src/serving/evaluation/stored-entity.js";
import { LmdbStore } from "../../src/storage/lmdb-store.js";
import type { Attributes } from "../../src/schemas/tracking-fields.js";
import { putRemoteContext, readRemoteContext } from "../../src/tracking/remote-contexts.js";
import { companyKey, userKey } from "../../src/tracking/users-companies.js";
import type { CompanyRecord, UserRecord } from "../../src/tracking/tracking-records.js";
import { runMicro } from "../support/micro.js";
import { seededRandom } from "../support/seeded-random.js";

const USERS = 10_000;
const COMPANIES = 200;
const ENVIRONMENT = "env-remote-context";
const ROLES = ["admin", "member", "viewer"];

const { values } = parseArgs({ options: { seconds: { type: "string", default: "3" } } });
const seconds = Number(values.seconds);

const directory = mkdtempSync(join(tmpdir(), "switchyard-remote-context-"));
const store = new LmdbStore({ path: directory, durability: "commit" });
try {
  // Attributes as the bench's seeded traffic stores them (bench/support/fixtures.ts).
  await store.write(() => {
    for (let user = 0; user < USERS; user++) {
      const attributes: Attributes = { name: `User ${user}`, role: ROLES[user % ROLES.length], signedUp: "2024-01-10" };
      const record: UserRecord = { id: `u${user}`, attributes, firstSeen: 1, lastSeen: 1, lastCompanyId: `c${user % COMPANIES}`, lastCompanyAt: 1 };
      store.table("users").put(userKey(ENVIRONMENT, record.id), record);
      putRemoteContext(store, ENVIRONMENT, "user", record.id, attributes);
    }
    for (let company = 0; company < COMPANIES; company++) {
      const attributes: Attributes = { name: `Company ${company}`, createdAt: company % 3 === 0 ? "2022-06-01" : "2024-02-15", seats: (company * 7) % 60 };
      const record: CompanyRecord = { id: `c${company}`, attributes, firstSeen: 1, lastSeen: 1 };
      store.table("companies").put(companyKey(ENVIRONMENT, record.id), record);
      putRemoteContext(store, ENVIRONMENT, "company", record.id, attributes);
    }
  });
  store.refresh();
  const random = seededRandom(33);
  const pairs = Array.from({ length: 65_536 }, () => [`u${Math.floor(random() * USERS)}`, `c${Math.floor(random() * COMPANIES)}`] as const);
  let next = 0;
  const pair = () => pairs[next++ & 65_535]!;
  const users = store.table("users");
  const companies = store.table("companies");
  const figures = await runMicro(
    "remote context read",
    [
      {
        name: "records read, decoded and flattened (before)",
        fn: () => {
          const [user, company] = pair();
          return [
            StoredEntity.fromAttributes("user", users.get(userKey(ENVIRONMENT, user))!.attributes).flat,
            StoredEntity.fromAttributes("company", companies.get(companyKey(ENVIRONMENT, company))!.attributes).flat,
          ];
        },
      },
      {
        name: "flat forms read (now)",
        fn: () => {
          const [user, company] = pair();
          const unused = () => ({});
          return [
            StoredEntity.fromRemoteContext("user", readRemoteContext(store, ENVIRONMENT, "user", user)!, unused).flat,
            StoredEntity.fromRemoteContext("company", readRemoteContext(store, ENVIRONMENT, "company", company)!, unused).flat,
          ];
        },
      },
    ],
    { timeMs: seconds * 1000, warmupMs: 500 },
  );
  for (const figure of figures) console.log(`${figure.name.padEnd(48)} ${(figure.meanNs / 1000).toFixed(2)} µs a request (user and company), ±${figure.rmePercent.toFixed(1)} %`);
  console.log(`the flat form takes ${((100 * figures[1]!.meanNs) / figures[0]!.meanNs).toFixed(0)} % of the time of the records`);
} finally {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
}
