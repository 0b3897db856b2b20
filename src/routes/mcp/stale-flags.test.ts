/**
 * The stale mark of list_flags (API.md §12, docs/DECISIONS.md) on both stores: flags made and targeted 40 days ago,
 * feature events received at chosen times through the tracking writer (single events and `/features/enabled` groups).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FeatureRepository } from "../../features/feature-repository.js";
import type { FeatureEventItem } from "../../schemas/tracking.js";
import type { KvStore } from "../../storage/kv.js";
import { planApp, TenancyRepository } from "../../tenancy/tenancy-repository.js";
import { applyTracking, recordEvaluations } from "../../../bench/support/direct-tracking.js";
import { evaluationRow } from "../../tracking/tracking-writer.js";
import { staleFlags, uniformRulesAnswer } from "./stale-flags.js";
import { openStore } from "../../../test/support/stores.js";

// Analytics and survey state derive from tracking only where they are registered, as every serving thread does.

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 25, 12);
const daysAgo = (days: number) => new Date(NOW - days * DAY);

const on = { filter: { type: "constant", value: true } };
const companies = { filter: { type: "context", field: "company.id", operator: "ANY_OF", values: ["acme"] } };

function event(key: string, evalResult = true): FeatureEventItem {
  return { type: "feature-flag-event", path: "", action: "check", key, targetingVersion: 1, evalContext: undefined, evalResult, evalRuleResults: undefined, evalMissingFields: undefined } as unknown as FeatureEventItem;
}

describe("uniformRulesAnswer", () => {
  it("finds rule lists that answer the same for every context", () => {
    expect(uniformRulesAnswer([])).toBe(false);
    expect(uniformRulesAnswer([on])).toBe(true);
    expect(uniformRulesAnswer([companies, on])).toBe(true);
    expect(uniformRulesAnswer([companies])).toBeUndefined();
    expect(uniformRulesAnswer([{ filter: { type: "constant", value: false } }])).toBe(false);
    expect(uniformRulesAnswer([{ filter: { type: "rolloutPercentage", key: "f", partialRolloutAttribute: "company.id", partialRolloutThreshold: 100000 } }])).toBe(true);
    expect(uniformRulesAnswer([{ filter: { type: "rolloutPercentage", key: "f", partialRolloutAttribute: "company.id", partialRolloutThreshold: 0 } }])).toBe(false);
    expect(uniformRulesAnswer([{ filter: { type: "rolloutPercentage", key: "f", partialRolloutAttribute: "company.id", partialRolloutThreshold: 50000 } }])).toBeUndefined();
    expect(uniformRulesAnswer([{ filter: { type: "group", operator: "and", filters: [companies.filter, { type: "constant", value: false }] } }])).toBe(false);
    expect(uniformRulesAnswer([{ filter: { type: "group", operator: "or", filters: [companies.filter, on.filter] } }])).toBe(true);
    expect(uniformRulesAnswer([{ filter: { type: "group", operator: "and", filters: [] } }])).toBe(true);
    expect(uniformRulesAnswer([{ filter: { type: "negation", filter: { type: "group", operator: "or", filters: [] } } }])).toBe(true);
    expect(uniformRulesAnswer([{ filter: { type: "negation", filter: companies.filter } }])).toBeUndefined();
  });
});

describe.each(["lmdb", "log"] as const)("staleFlags (%s store)", (kind) => {
  let dir: string;
  let store: KvStore;
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("marks old flags nothing evaluated, and old flags every environment serves one answer to everyone", async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-stale-"));
    store = await openStore(kind, dir);
    const tenancy = new TenancyRepository(store);
    const features = new FeatureRepository(store);
    const planned = planApp("Acme", daysAgo(60).toISOString());
    await store.write(() => tenancy.insertApp(planned.app, planned.trackingKeyDigest, planned.environments.map((environment) => environment.record)));
    const [production, development] = planned.environments.map((environment) => environment.record);

    for (const key of ["unused", "all-on", "on-here-off-there", "targeted", "retargeted", "evaluated-off", "grouped", "opt-in", "switched-off", "switched-lately"]) {
      await features.putFeature(planned.app.id, key, { optInEnabled: key === "opt-in" }, daysAgo(40));
    }
    await features.putFeature(planned.app.id, "young", {}, daysAgo(5));
    for (const environment of [production!, development!]) {
      await features.putRules(environment.id, "all-on", "targeting", [on], daysAgo(35));
      await features.putRules(environment.id, "targeted", "targeting", [companies], daysAgo(35));
      await features.putRules(environment.id, "opt-in", "targeting", [on], daysAgo(35));
    }
    await features.putRules(production!.id, "on-here-off-there", "targeting", [on], daysAgo(35));
    // The kill switch is targeting too: off everywhere long ago answers "off" to all; moved lately is a change.
    for (const environment of [production!, development!]) {
      await features.putRules(environment.id, "switched-off", "targeting", [companies], daysAgo(36));
      await store.write(() => features.writeEnabled(environment.id, "switched-off", false, daysAgo(35).toISOString()));
      await features.putRules(environment.id, "switched-lately", "targeting", [on], daysAgo(36));
    }
    await store.write(() => features.writeEnabled(production!.id, "switched-lately", false, daysAgo(3).toISOString()));
    await features.putRules(production!.id, "retargeted", "targeting", [on], daysAgo(35));
    await features.putRules(development!.id, "retargeted", "targeting", [on], daysAgo(10));

    // Appended in the order of their times, as the service appends them. An evaluation of "unused" from before the
    // window does not count.
    await applyTracking(store, production!.id, [event("unused")], NOW - 31 * DAY);
    // Evaluated lately: everything but "unused" and "young"; "evaluated-off" only in development, 29 days ago.
    const lately = ["all-on", "on-here-off-there", "targeted", "retargeted", "opt-in", "switched-off", "switched-lately"];
    await applyTracking(store, production!.id, lately.map((key) => event(key)), NOW - 2 * DAY);
    await applyTracking(store, development!.id, [event("evaluated-off", false)], NOW - 29 * DAY);
    // "grouped" as /features/enabled stores it, then a newer single event of another flag on top of the group.
    await recordEvaluations(store, production!.id, { action: "evaluate", evalContext: null, results: [{ key: "grouped", evalResult: true }], rows: [evaluationRow({ key: "grouped", targetingVersion: 0, evalResult: true, evalRuleResults: [], evalMissingFields: [] })] }, NOW - 3 * DAY);
    await applyTracking(store, production!.id, [event("all-on")], NOW - DAY);

    const verdicts = staleFlags(store, features, [production!, development!], features.listFeatures(planned.app.id), NOW);
    expect(Object.fromEntries(verdicts)).toEqual({
      unused: { stale: true, reason: "unevaluated" },
      "all-on": { stale: true, reason: "constant" },
      "evaluated-off": { stale: true, reason: "constant" },
      "on-here-off-there": { stale: false, reason: null },
      targeted: { stale: false, reason: null },
      retargeted: { stale: false, reason: null },
      grouped: { stale: true, reason: "constant" },
      "opt-in": { stale: false, reason: null },
      "switched-off": { stale: true, reason: "constant" },
      "switched-lately": { stale: false, reason: null },
      young: { stale: false, reason: null },
    });
  });
});
