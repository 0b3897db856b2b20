/**
 * Exposure cells through the writer on a real LmdbStore: a cell known to be committed is skipped without a read, and
 * what the writer remembers for one environment and day never stands in for another.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { useTempLmdbStore } from "../../test/support/temp-lmdb.js";
import { LmdbStore } from "../storage/lmdb-store.js";
import type { KvStore } from "../storage/kv.js";
import { AggregateWriter } from "./aggregate-writer.js";
import { cellKey, DAY_MS, dayOf } from "./keys.js";

let store: KvStore;
const temp = useTempLmdbStore("switchyard-aggregate-writer-", "all");

beforeAll(async () => {
  store = temp.store;
});

const DAY1 = 19_700 * DAY_MS;
const DAY2 = DAY1 + DAY_MS;

/** One transaction of exposures, each [environment, received at, company, feature]; answers the cells it wrote. */
async function expose(events: [string, number, string, string][]): Promise<number> {
  return store.write(() => {
    const writers = new Map<string, AggregateWriter>();
    for (const [environmentId, receivedAt, companyId, key] of events) {
      let writer = writers.get(environmentId);
      if (writer === undefined) writers.set(environmentId, (writer = new AggregateWriter(store, environmentId)));
      writer.featureEvent({ action: "evaluate", key, evalResult: true, countsForCompanyId: companyId, receivedAt });
    }
    let written = 0;
    for (const writer of writers.values()) written += writer.flush();
    return written;
  });
}

const exposed = (environmentId: string, at: number, companyId: string, key: string) => store.table("aggregates").get(cellKey(environmentId, "x", key, dayOf(at), companyId)) !== undefined;

describe("AggregateWriter exposures", () => {
  it("writes each environment's and day's cell once, however the events interleave", async () => {
    expect(await expose([["env-a", DAY1, "acme", "f1"], ["env-a", DAY1, "acme", "f1"], ["env-b", DAY1, "acme", "f1"], ["env-a", DAY2, "acme", "f1"], ["env-a", DAY1, "globex", "f1"]])).toBe(4);
    // Read back as committed: known from now on.
    expect(await expose([["env-a", DAY1, "acme", "f1"], ["env-b", DAY1, "acme", "f1"], ["env-a", DAY2, "acme", "f1"]])).toBe(0);
    // Known cells of env-a and day 1 do not stand in for env-c, day 3, or another feature.
    const DAY3 = DAY2 + DAY_MS;
    expect(await expose([["env-a", DAY1, "acme", "f1"], ["env-c", DAY1, "acme", "f1"], ["env-a", DAY1, "acme", "f2"], ["env-a", DAY3, "acme", "f1"], ["env-a", DAY1, "acme", "f1"]])).toBe(3);
    for (const [environmentId, at, companyId, key] of [
      ["env-a", DAY1, "acme", "f1"],
      ["env-b", DAY1, "acme", "f1"],
      ["env-a", DAY2, "acme", "f1"],
      ["env-a", DAY1, "globex", "f1"],
      ["env-c", DAY1, "acme", "f1"],
      ["env-a", DAY1, "acme", "f2"],
      ["env-a", DAY3, "acme", "f1"],
    ] as const) {
      expect(exposed(environmentId, at, companyId, key), `${environmentId} ${at} ${companyId} ${key}`).toBe(true);
    }
    expect(exposed("env-b", DAY2, "acme", "f1")).toBe(false);
  });
});
