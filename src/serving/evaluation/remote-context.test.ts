/**
 * Remote context reads the flat form stored beside each user and company record (src/tracking/remote-contexts.ts):
 * written and rewritten with the record's attributes, and absent from records an older build wrote, where the
 * record itself is read and flattened instead.
 */
import { runProjectionStep } from "../../tracking/projector.js";
import { beforeEach, expect, it } from "vitest";
import { useTempLmdbStore } from "../../../test/support/temp-lmdb.js";
import { LmdbStore } from "../../storage/lmdb-store.js";
import { TenancyRepository } from "../../tenancy/tenancy-repository.js";
import { migrateStore, SCHEMA_VERSION } from "../../storage/schema-version.js";
import { readRemoteContext, REMOTE_CONTEXTS_UPGRADE, remoteContextKey } from "../../tracking/remote-contexts.js";
import type { EvaluateJob } from "../protocol.js";
import { createJobContext, type JobContext } from "../job-context.js";
import { mergedContext, resolveWithRemoteContext, storedEntity } from "./remote-context.js";
import { compileRuleset, contextValues, type FeatureDefinition } from "../../evaluation/index.js";
import { runJobs } from "../run-job.js";

let store: LmdbStore;
const temp = useTempLmdbStore("switchyard-remote-");
let context: JobContext;
let environmentId: string;

beforeEach(async () => {
  store = temp.store;
  context = createJobContext(store);
  environmentId = (await new TenancyRepository(store).createApp("Acme")).environments[0]!.id;
});

/** Tracks `calls` and projects them, as the service does before a later read sees them. */
async function trackAndProject(calls: [call: "user" | "company", body: unknown][]): Promise<void> {
  const fail = (error: unknown) => {
    throw error;
  };
  const jobs = calls.map(([call, body]) => ({ kind: "track" as const, environmentId, call, body: Buffer.from(JSON.stringify(body)), contentType: "application/json", receivedAt: Date.UTC(2024, 0, 1) }));
  const results = await runJobs(context, jobs, fail);
  for (const result of results) expect(result.status).toBe(200);
  await runProjectionStep(context.store, 10_000, fail, context.projections);
  context.store.refresh();
}

const job: EvaluateJob = { kind: "evaluate", environmentId: "", minFlagStateVersion: 0, query: "", onlyEnabled: false, attributeEpoch: 0, attributeCacheMs: 0 };
const read = (kind: "user" | "company", id: string) => storedEntity(context, { ...job, environmentId }, kind, id);

it("reads the flat form written with the record, and follows later changes", async () => {
  await trackAndProject([["user", { userId: "u1", attributes: { role: "admin", tags: ["a", "b"], plan: { tier: 2 } } }], ["company", { companyId: "c1", attributes: { seats: 12 } }]]);
  expect(readRemoteContext(store, environmentId, "user", "u1")).toEqual(["user.role", "admin", "user.tags.0", "a", "user.tags.1", "b", "user.plan.tier", "2"]);
  expect([...read("user", "u1")!.flat!]).toEqual([["user.role", "admin"], ["user.tags.0", "a"], ["user.tags.1", "b"], ["user.plan.tier", "2"]]);
  expect([...read("company", "c1")!.flat!]).toEqual([["company.seats", "12"]]);
  expect(read("user", "nobody")).toBeNull();

  // The same attributes again change nothing; a new value is merged and the flat form follows.
  await trackAndProject([["user", { userId: "u1", attributes: { role: "admin" } }]]);
  expect(read("user", "u1")!.flat!.get("user.role")).toBe("admin");
  await trackAndProject([["user", { userId: "u1", attributes: { role: "viewer", name: "Ann" } }]]);
  expect(read("user", "u1")!.flat!.get("user.role")).toBe("viewer");
  expect(read("user", "u1")!.flat!.get("user.name")).toBe("Ann");
  expect(read("user", "u1")!.attributes).toEqual({ role: "viewer", tags: ["a", "b"], plan: { tier: 2 }, name: "Ann" });
});

it("keeps no flat form for attributes only the nested merge can settle", async () => {
  await trackAndProject([["user", { userId: "u2", attributes: { "a.b": "x", a: { b: "y" } } }]]);
  expect(readRemoteContext(store, environmentId, "user", "u2")).toBe(false);
  const stored = read("user", "u2")!;
  expect(stored.flat).toBeNull();
  expect(stored.attributes).toEqual({ "a.b": "x", a: { b: "y" } });
});

it("reads and flattens the record itself where no flat form is stored beside it (data from an older build)", async () => {
  await trackAndProject([["company", { companyId: "c2", attributes: { plan: "business", seats: 40 } }]]);
  await store.write(() => store.table("remoteContexts").remove(remoteContextKey(environmentId, "company", "c2")));
  context.store.refresh();
  expect(readRemoteContext(store, environmentId, "company", "c2")).toBeUndefined();
  const stored = read("company", "c2")!;
  expect([...stored.flat!]).toEqual([["company.plan", "business"], ["company.seats", "40"]]);
  expect(stored.attributes).toEqual({ plan: "business", seats: 40 });
});

it("writes the flat form of every record a version 4 data dir holds when it is upgraded", async () => {
  await store.write(() => {
    store.table("meta").put("schemaVersion", 4);
    store.table("users").put(`${environmentId}\u0000u3`, { id: "u3", attributes: { role: "admin" }, firstSeen: 1, lastSeen: 1, lastCompanyId: null, lastCompanyAt: null });
    store.table("companies").put(`${environmentId}\u0000c3`, { id: "c3", attributes: { "a.b": 1 }, firstSeen: 1, lastSeen: 1 });
  });
  await migrateStore(store, [REMOTE_CONTEXTS_UPGRADE]);
  expect(store.table("meta").get("schemaVersion")).toBe(SCHEMA_VERSION);
  expect(readRemoteContext(store, environmentId, "user", "u3")).toEqual(["user.role", "admin"]);
  expect(readRemoteContext(store, environmentId, "company", "c3")).toBe(false);
});

it("resolves a nested context's fields as the merged context {...stored, ...sent} does, flat form or not", async () => {
  await trackAndProject([
    ["user", { userId: "flat", attributes: { role: "admin", plan: "pro", tags: ["a", "b"], seats: 3 } }],
    ["user", { userId: "nested", attributes: { "a.b": "x", a: { b: "y" }, role: "viewer" } }],
    ["company", { companyId: "co", attributes: { seats: 12, plan: { tier: 2 } } }],
  ]);
  const fields = ["user.id", "user.role", "user.plan", "user.plan.x", "user.tags.0", "user.seats", "user.a.b", "company.seats", "company.plan.tier", "company.id"];
  const definitions: FeatureDefinition[] = fields.map((field, index) => ({
    key: `f${index}`,
    stage: null,
    targeting: { version: 1, rules: [{ filter: { type: "context", field, operator: "IS", values: ["x"] } }] },
  }));
  const ruleset = compileRuleset(definitions);
  const sentContexts: Record<string, unknown>[] = [
    { user: { id: "flat" } },
    { user: { id: "flat", role: "editor", tags: ["z"] }, company: { id: "co" } },
    { user: { id: "flat", "plan.x": "sent" }, company: { id: "co", plan: "flat-now" } },
    { user: { id: "nested", "a.b": "sent" } },
    { user: { id: "nested", a: { b: "sent" } }, company: { id: "nobody", seats: 1 } },
    { user: { id: "nobody", role: "admin" }, other: { x: 1 } },
  ];
  for (const sent of sentContexts) {
    const merged: Record<string, unknown> = { ...sent };
    for (const kind of ["user", "company"] as const) {
      const entity = sent[kind] as Record<string, unknown> | undefined;
      const stored = entity === undefined ? null : read(kind, entity.id as string);
      if (stored !== null) merged[kind] = { ...stored.attributes, ...entity };
    }
    const resolved = resolveWithRemoteContext(context, { ...job, environmentId }, ruleset, structuredClone(sent));
    expect(resolved.values, JSON.stringify(sent)).toEqual(contextValues(ruleset, merged));
    expect(mergedContext(sent, resolved.storedUser, resolved.storedCompany)).toEqual(merged);
    expect(resolved.remoteContextUsed).toBe(JSON.stringify(merged) !== JSON.stringify(sent));
  }
});
