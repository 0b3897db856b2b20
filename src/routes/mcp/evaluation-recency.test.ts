/**
 * The feature-event recency index behind stale marks: the same keys as a fresh scan of the log would find, whether
 * it was scanned afresh, topped up with newer events, cut short by its limits, or outgrown.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { FeatureEventItem } from "../../schemas/tracking.js";
import type { KvStore } from "../../storage/kv.js";
import { planApp, TenancyRepository } from "../../tenancy/tenancy-repository.js";
import { applyTracking } from "../../../bench/support/direct-tracking.js";
import { EvaluationRecency } from "./evaluation-recency.js";
import { openStore } from "../../../test/support/stores.js";

// Analytics and survey state derive from tracking only where they are registered, as every serving thread does.

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 25, 12);

function event(key: string): FeatureEventItem {
  return { type: "feature-flag-event", path: "", action: "check", key, targetingVersion: 1, evalContext: undefined, evalResult: true, evalRuleResults: undefined, evalMissingFields: undefined } as unknown as FeatureEventItem;
}

describe.each(["lmdb", "log"] as const)("EvaluationRecency (%s store)", (kind) => {
  let dir: string;
  let store: KvStore;
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function environment(): Promise<string> {
    dir = mkdtempSync(join(tmpdir(), "switchyard-recency-"));
    store = await openStore(kind, dir);
    const planned = planApp("Acme", new Date(NOW - 60 * DAY).toISOString());
    await store.write(() => new TenancyRepository(store).insertApp(planned.app, planned.trackingKeyDigest, planned.environments.map((entry) => entry.record)));
    return planned.environments[0]!.record.id;
  }

  const keysOf = (answer: { keys: Set<string> }) => [...answer.keys].sort();

  it("answers what a fresh scan answers, topped up with what was appended since, and lets keys age out", async () => {
    const environmentId = await environment();
    const recency = new EvaluationRecency(store);
    await applyTracking(store, environmentId, [event("old")], NOW - 40 * DAY);
    await applyTracking(store, environmentId, [event("a"), event("b")], NOW - 20 * DAY);
    const since = NOW - 30 * DAY;
    expect(recency.evaluatedSince(environmentId, since)).toEqual({ keys: new Set(["a", "b"]), complete: true });

    // Appended after the first question: read from where the index stopped, not scanned again.
    await applyTracking(store, environmentId, [event("c"), event("old")], NOW - DAY);
    const topped = recency.evaluatedSince(environmentId, since);
    expect(keysOf(topped)).toEqual(["a", "b", "c", "old"]);
    expect(keysOf(new EvaluationRecency(store).evaluatedSince(environmentId, since))).toEqual(keysOf(topped));

    // Eleven days later "a" and "b" (20 days old then 31) fall out of the window.
    expect(keysOf(recency.evaluatedSince(environmentId, since + 11 * DAY))).toEqual(["c", "old"]);
  });

  it("says a scan cut short is incomplete until the window starts after what it read, and re-scans a log that ran far ahead", async () => {
    const environmentId = await environment();
    for (let day = 25; day >= 1; day--) await applyTracking(store, environmentId, [event(`day-${day}`)], NOW - day * DAY);
    const recency = new EvaluationRecency(store, { maxScanned: 10, maxKeys: 1_000 });
    const cut = recency.evaluatedSince(environmentId, NOW - 30 * DAY);
    expect(cut.complete).toBe(false);
    expect(keysOf(cut)).toEqual(Array.from({ length: 10 }, (_, index) => `day-${index + 1}`).sort());
    // The oldest event read is 10 days old: a window starting 9 days ago is fully covered.
    expect(recency.evaluatedSince(environmentId, NOW - 9 * DAY).complete).toBe(true);

    for (let index = 0; index < 11; index++) await applyTracking(store, environmentId, [event(`late-${index}`)], NOW);
    // Eleven new events are more than a top-up may read: scanned afresh, newest first, cut at ten again.
    const again = recency.evaluatedSince(environmentId, NOW - 30 * DAY);
    expect(again.complete).toBe(false);
    expect(keysOf(again)).toEqual(Array.from({ length: 10 }, (_, index) => `late-${index + 1}`).sort());
  });

  it("keeps no index past maxKeys, and still answers every key", async () => {
    const environmentId = await environment();
    await applyTracking(store, environmentId, ["k1", "k2", "k3"].map(event), NOW - DAY);
    const recency = new EvaluationRecency(store, { maxScanned: 1_000, maxKeys: 2 });
    expect(recency.evaluatedSince(environmentId, NOW - 30 * DAY)).toEqual({ keys: new Set(["k1", "k2", "k3"]), complete: true });
    await applyTracking(store, environmentId, [event("k4")], NOW);
    expect(keysOf(recency.evaluatedSince(environmentId, NOW - 30 * DAY))).toEqual(["k1", "k2", "k3", "k4"]);
  });
});
