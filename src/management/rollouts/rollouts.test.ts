/**
 * Rollouts in a real LMDB store, below HTTP: the exposure projection (groups from the rule's own hash and the rules
 * from before, events counted only after the unit's exposure in log order, per-step cohorts), decisions applied once
 * however many nodes submit them, a hand edit turning an advance into a pause, and a rebuild from the log equal to
 * the live projection.
 */
import { describe, expect, it } from "vitest";
import { useTempLmdbStore } from "../../../test/support/temp-lmdb.js";
import { AuditLog } from "../../accounts/audit-log.js";
import { ADMIN_ACTOR } from "../../accounts/principal.js";
import { rolloutBucket } from "../../evaluation/index.js";
import type { TrackingItem } from "../../schemas/tracking.js";
import { TRACKING_PROJECTIONS } from "../../serving/tracking-projections.js";
import { key } from "../../storage/kv.js";
import { planApp } from "../../tenancy/tenancy-repository.js";
import { projectRequests } from "../../tracking/project-requests.js";
import type { ChangeBodies, ChangeOf, ChangeType } from "../changes.js";
import { LocalManagementLog } from "../management-log.js";
import { RolloutRepository } from "./rollout-repository.js";

const temp = useTempLmdbStore("switchyard-rollouts-");
let clock = Date.UTC(2026, 0, 1);
let counter = 0;

function change<T extends ChangeType>(type: T, body: ChangeBodies[T]): ChangeOf<T> {
  clock += 1000;
  return { id: `chg_${++counter}`, at: new Date(clock).toISOString(), actor: ADMIN_ACTOR, address: null, type, ...body } as unknown as ChangeOf<T>;
}

const PRO = [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }];
const SETTINGS = { steps: [50, 100], stepSeconds: 60, minExposures: 1, attribute: "company.id" as const, guards: [{ event: "error", direction: "lower_is_better" as const, maxRelativeChange: 0.1, alpha: 0.05 }], onBreach: "rollback" as const };

/** Company ids whose bucket for `feature` is inside (or outside) a 50 % share. */
function companies(feature: string, inside: boolean, count: number): string[] {
  const found: string[] = [];
  for (let index = 0; found.length < count; index++) if (rolloutBucket(`${feature}.c${index}`) < 50_000 === inside) found.push(`c${index}`);
  return found;
}

const check = (feature: string, companyId: string, plan: string): TrackingItem => ({ type: "feature-flag-event", action: "check", key: feature, evalResult: true, evalContext: { company: { id: companyId, plan }, user: { id: `u-${companyId}` } } }) as unknown as TrackingItem;
const error = (companyId: string): TrackingItem => ({ type: "event", event: "error", userId: `u-${companyId}`, companyId }) as unknown as TrackingItem;

async function setUp() {
  const store = temp.store;
  const management = new LocalManagementLog(store);
  const planned = planApp("Acme", new Date(clock).toISOString());
  const environmentId = planned.environments[0]!.record.id;
  const submit = async <T extends ChangeType>(type: T, body: ChangeBodies[T]) => {
    const outcome = await management.submit(change(type, body));
    if (!outcome.ok) throw new Error(`${type}: ${outcome.error.message}`);
    return outcome.value;
  };
  await submit("app.create", { app: planned.app, trackingKeyDigest: planned.trackingKeyDigest, environments: planned.environments.map((each) => each.record) });
  for (const feature of ["huddle", "calls"]) {
    await submit("feature.put", { appId: planned.app.id, featureKey: feature, featureId: `ft${feature}0000000`.slice(0, 13), fields: {} });
    await submit("rules.put", { environmentId, featureKey: feature, kind: "targeting", list: PRO });
  }
  const project = (items: TrackingItem[], receivedAt = (clock += 1000)) =>
    store.write(() => projectRequests(store, [{ environmentId, receivedAt, items, feedbackIds: items.map(() => null) }], () => undefined, TRACKING_PROJECTIONS));
  return { store, management, environmentId, submit, project, rollouts: new RolloutRepository(store) };
}

describe("rollouts in the store", () => {
  it("projects exposures and guard events per unit, after first exposure in log order", async () => {
    const { environmentId, submit, project, rollouts, store } = await setUp();
    const { rollout } = await submit("rollout.start", { environmentId, featureKey: "huddle", rolloutId: "ro_1", settings: SETTINGS });
    const [inside, insideToo] = companies("huddle", true, 2);
    const [outside] = companies("huddle", false, 1);
    await project([
      error(inside!), // before its exposure: not counted
      check("huddle", inside!, "pro"),
      error(inside!),
      check("huddle", outside!, "pro"),
      error(outside!),
      error(outside!),
      check("huddle", insideToo!, "free"), // fails the rules from before: in no group
      error(insideToo!),
      check("calls", outside!, "pro"), // another feature: no rollout there
      check("huddle", inside!, "pro"), // seen again: still one unit
    ]);
    expect(rollouts.tally(rollout.id, 0, "exposed", 1)).toEqual({ units: 1, sums: [1], sumsOfSquares: [1] });
    expect(rollouts.tally(rollout.id, 0, "control", 1)).toEqual({ units: 1, sums: [2], sumsOfSquares: [4] });
    expect(store.table("rolloutUnits").get(key(rollout.id, 0, outside!))).toEqual({ exposed: false, counts: [2] });
  });

  it("puts an entry in the step in force when it arrived, however late it is projected, and starts each step's cohort afresh", async () => {
    const { environmentId, submit, project, rollouts } = await setUp();
    await submit("rollout.start", { environmentId, featureKey: "huddle", rolloutId: "ro_1", settings: { ...SETTINGS, steps: [50, 80, 100] } });
    const arrivedInFirstStep = clock + 500;
    const [inside] = companies("huddle", true, 1);
    // Outside the first step's share, inside the second's.
    const outside = companies("huddle", false, 50).find((id) => rolloutBucket(`huddle.${id}`) < 80_000);
    await submit("rollout.transition", { environmentId, rolloutId: "ro_1", action: "advance", expected: { state: "running", step: 0 }, reason: null, evidence: null });
    await project([check("huddle", outside!, "pro")], arrivedInFirstStep);
    expect(rollouts.tally("ro_1", 0, "control", 1).units).toBe(1);
    expect(rollouts.tally("ro_1", 1, "control", 1).units).toBe(0);
    // In the second step the same units join its cohort again, each in the group of the new share: the former control
    // unit the raised share took in is exposed now.
    await project([check("huddle", outside!, "pro"), check("huddle", inside!, "pro"), error(inside!)]);
    expect(rollouts.tally("ro_1", 1, "exposed", 1)).toEqual({ units: 2, sums: [1], sumsOfSquares: [1] });
    expect(rollouts.tally("ro_1", 1, "control", 1).units).toBe(0);
  });

  it("applies a decision once however many nodes submit it, and drops the projected data when the rollout ends", async () => {
    const { environmentId, submit, project, rollouts, store } = await setUp();
    await submit("rollout.start", { environmentId, featureKey: "huddle", rolloutId: "ro_1", settings: SETTINGS });
    await project([check("huddle", companies("huddle", true, 1)[0]!, "pro")]);
    const decision = { environmentId, rolloutId: "ro_1", action: "advance" as const, expected: { state: "running" as const, step: 0 }, reason: null, evidence: { exposures: { exposed: 1, control: 0 }, guards: [] } };
    const first = await submit("rollout.transition", decision);
    const second = await submit("rollout.transition", decision);
    expect(first).toMatchObject({ applied: true, rollout: { state: "completed", step: 1 } });
    expect(second).toMatchObject({ applied: false, rollout: { state: "completed", step: 1 } });
    const actions = new AuditLog(store).page({ entity: "rollout" }, undefined, 100).entries.map((entry) => entry.action);
    expect(actions).toEqual(["rollout.started", "rollout.completed"]);
    expect(rollouts.activeId(environmentId, "huddle")).toBeUndefined();
    expect([...store.table("rolloutUnits").range({})]).toEqual([]);
    expect(rollouts.get(environmentId, "ro_1")!.stepRecords[0]!.evidence).toEqual(decision.evidence);
    // At 100 %: the rules from before, bare.
    expect(store.table("targeting").get(key(environmentId, "huddle"))!.targeting.rules).toEqual(PRO);
  });

  it("pauses instead of advancing over a hand edit, and refuses to resume over it", async () => {
    const { environmentId, submit, management } = await setUp();
    await submit("rollout.start", { environmentId, featureKey: "calls", rolloutId: "ro_2", settings: { ...SETTINGS, steps: [10, 50, 100] } });
    await submit("rules.put", { environmentId, featureKey: "calls", kind: "targeting", list: [{ filter: { type: "constant", value: true } }] });
    const moved = await submit("rollout.transition", { environmentId, rolloutId: "ro_2", action: "advance", expected: { state: "running", step: 0 }, reason: null, evidence: null });
    expect(moved.rollout).toMatchObject({ state: "paused", step: 0 });
    expect(moved.rollout.reason).toMatch(/edited by hand/);
    const resumed = await management.submit(change("rollout.transition", { environmentId, rolloutId: "ro_2", action: "resume", expected: null, reason: null, evidence: null }));
    expect(resumed.ok).toBe(false);
    // Rolling back still writes exactly the rules from before the rollout.
    const rolledBack = await submit("rollout.transition", { environmentId, rolloutId: "ro_2", action: "rollback", expected: null, reason: "by hand", evidence: null });
    expect(rolledBack.rollout.state).toBe("rolled_back");
    expect(temp.store.table("targeting").get(key(environmentId, "calls"))!.targeting.rules).toEqual(PRO);
  });
});
