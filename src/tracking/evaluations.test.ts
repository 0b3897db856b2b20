/**
 * The logged form of feature events sharing one context (evaluations.ts): the compact form the service logs now and
 * the form logged before project alike — the same feature-event entries and the same exposure cells.
 */
import { TRACKING_PROJECTIONS } from "../serving/tracking-projections.js";
import { beforeAll, describe, expect, it } from "vitest";
import { useTempLmdbStore } from "../../test/support/temp-lmdb.js";
import { prefixRange, type KvStore } from "../storage/kv.js";
import { evaluationCount, evaluationRow, evaluationsOf, type LoggedEvaluations } from "./evaluations.js";
import { projectRequests } from "./project-requests.js";
import { TrackingReader } from "./reader.js";


const T0 = Date.UTC(2024, 0, 1);
let store: KvStore;
const temp = useTempLmdbStore("switchyard-evaluations-", "all");

beforeAll(async () => {
  store = temp.store;
});

const context = { user: { id: "u1" }, company: { id: "acme" } };
const events = [
  { key: "a", targetingVersion: 1, evalResult: true, evalRuleResults: [true], evalMissingFields: [] },
  { key: "b", targetingVersion: 2, evalResult: false, evalRuleResults: [false], evalMissingFields: ["user.plan"] },
  { key: "c", targetingVersion: 3, evalResult: true, evalRuleResults: [], evalMissingFields: [] },
];

/** Projects one logged request holding `evaluations` into `environmentId`; answers what readers and cells show. */
async function projected(environmentId: string, evaluations: LoggedEvaluations) {
  await store.write(() => projectRequests(store, [{ environmentId, receivedAt: T0, items: [], feedbackIds: [], evaluations }], () => undefined, TRACKING_PROJECTIONS));
  const entries = new TrackingReader(store).listFeatureEvents(environmentId, undefined, 100).featureEvents.map(({ cursor: _cursor, ...event }) => event);
  const cells = [...store.table("aggregates").range(prefixRange(environmentId))].map((entry) => [entry.key.slice(environmentId.length), entry.value]);
  return { entries, cells };
}

describe("logged evaluations", () => {
  it("projects the compact form as the form logged before", async () => {
    const before: LoggedEvaluations = {
      action: "evaluate",
      evalContext: context,
      results: events.map(({ key, evalResult }) => ({ key, evalResult })),
      // Rows as arrays and as bytes: both were logged.
      rows: events.map((event, index) => (index === 1 ? [event.key, event.targetingVersion, event.evalResult, event.evalRuleResults, event.evalMissingFields] : evaluationRow(event))),
    };
    const compact = evaluationsOf("evaluate", context, events.map((event) => event.key), events.map(evaluationRow), events.map((event) => event.evalResult));
    expect(evaluationCount(before)).toBe(3);
    expect(evaluationCount(compact)).toBe(3);
    const fromBefore = await projected("env-before", before);
    const fromCompact = await projected("env-compact", compact);
    expect(fromBefore.entries).toHaveLength(3);
    expect(fromBefore.entries.map((entry) => [entry.key, entry.evalResult, entry.targetingVersion])).toEqual([["a", true, 1], ["b", false, 2], ["c", true, 3]]);
    expect(fromCompact.entries).toEqual(fromBefore.entries);
    // Exposure cells for the true results only, alike in both.
    expect(fromBefore.cells.length).toBe(2);
    expect(fromCompact.cells).toEqual(fromBefore.cells);
  });

  it("leaves the results out when every one is true, and projects them as true", async () => {
    const allOn = evaluationsOf("evaluate", context, ["x", "y"], [evaluationRow({ ...events[0]!, key: "x" }), evaluationRow({ ...events[0]!, key: "y" })]);
    expect("evalResults" in allOn).toBe(false);
    const { entries, cells } = await projected("env-all-on", allOn);
    expect(entries.map((entry) => [entry.key, entry.evalResult])).toEqual([["x", true], ["y", true]]);
    expect(cells).toHaveLength(2);
  });
});
