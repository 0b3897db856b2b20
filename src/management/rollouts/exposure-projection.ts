/**
 * The exposure projection of guarded rollouts (API.md §17), written in the projector's transaction beside the
 * tracking entries it derives from (so it survives restarts and a rebuild from the log gives it again).
 *
 * Per rollout and step, a cohort: a unit (the rollout's `attribute`) joins the step's cohort at its first `check` or
 * `evaluate` feature event for the feature in that step, in the group the rollout itself gives it — in the step's
 * share (the rule's own hash) and passing the targeting from before: exposed; passing it but outside the share:
 * control; neither: not in the cohort. From then on each guard's event for that unit adds to its count. A step's
 * cohort starts afresh, so both groups of a step joined over the same time (a unit seen in earlier steps joins again,
 * in the group of the new share: a control unit that the raised share takes in is exposed from then on).
 *
 * Which step an entry belongs to is decided by its arrival time against the steps' start times, not by when it is
 * projected, so a rebuild gives the same cohorts. Only features with an active rollout cost more than a Map lookup.
 */
import { compileRuleset, evaluateRuleset, flattenContext, rolloutBucket } from "../../evaluation/index.js";
import type { CompiledRuleset } from "../../evaluation/index.js";
import type { FeatureDefinition } from "../../evaluation/types.js";
import { ROLLOUT_SCALE } from "../../evaluation/rollout-bucket.js";
import { key, type KvStore } from "../../storage/kv.js";
import { EXPOSURE_ACTIONS } from "../../tracking/attribution.js";
import type { ProjectedFeatureEvent, ProjectionWriter, TrackingProjection } from "../../tracking/projections.js";
import type { EventRecord } from "../../tracking/tracking-records.js";
import type { RolloutRecord } from "./rollout-records.js";
import { emptyTally, RolloutRepository } from "./rollout-repository.js";

const UNSAFE_SEGMENTS = new Set(["__proto__", "constructor", "prototype"]);

/** The base targeting compiled once per rollout (it never changes while the rollout lives). */
const compiledBases = new Map<string, CompiledRuleset>();

function baseRuleset(rollout: RolloutRecord): CompiledRuleset {
  let ruleset = compiledBases.get(rollout.id);
  if (ruleset === undefined) {
    const definition = { key: rollout.featureKey, stage: null, targeting: { version: rollout.base.version, rules: rollout.base.rules }, config: { version: 0, variants: [] } } as FeatureDefinition;
    ruleset = compileRuleset([definition]);
    if (compiledBases.size > 1000) compiledBases.clear();
    compiledBases.set(rollout.id, ruleset);
  }
  return ruleset;
}

/** An evaluation context as logged (nested or already flattened) as a flat map and a nested object. */
function readContext(evalContext: Record<string, unknown>): { flat: Map<string, string>; nested: Record<string, unknown> } {
  const flat = flattenContext(evalContext);
  const nested: Record<string, unknown> = {};
  for (const [path, value] of flat) {
    const segments = path.split(".");
    if (segments.some((segment) => UNSAFE_SEGMENTS.has(segment))) continue;
    let node = nested;
    for (let depth = 0; depth < segments.length - 1; depth++) {
      const child = node[segments[depth]!];
      node = typeof child === "object" && child !== null ? (child as Record<string, unknown>) : (node[segments[depth]!] = {});
    }
    node[segments[segments.length - 1]!] = value;
  }
  return { flat, nested };
}

class FollowedRollout {
  private readonly startTimes: number[];

  constructor(
    private readonly store: KvStore,
    readonly rollout: RolloutRecord,
  ) {
    this.startTimes = rollout.stepRecords.map((step) => (step.startedAt === null ? Number.POSITIVE_INFINITY : Date.parse(step.startedAt)));
  }

  /** The step in force when an entry arrived, or -1 before the rollout began. */
  private stepAt(receivedAt: number): number {
    for (let step = this.rollout.step; step >= 0; step--) if (this.startTimes[step]! <= receivedAt) return step;
    return -1;
  }

  exposure(record: ProjectedFeatureEvent): void {
    if (!record.evalContext) return;
    const step = this.stepAt(record.receivedAt);
    if (step < 0) return;
    const { flat, nested } = readContext(record.evalContext);
    const unit = flat.get(this.rollout.attribute);
    if (unit === undefined || unit === "") return;
    const unitKey = key(this.rollout.id, step, unit);
    const units = this.store.table("rolloutUnits");
    if (units.get(unitKey) !== undefined) return;
    const inBase = evaluateRuleset(baseRuleset(this.rollout), nested, { onlyKey: this.rollout.featureKey })[0]?.isEnabled === true;
    if (!inBase) return;
    const percent = this.rollout.steps[step]!;
    const exposed = rolloutBucket(`${this.rollout.featureKey}.${unit}`) < Math.round((percent * ROLLOUT_SCALE) / 100);
    const guards = this.rollout.guards.length;
    units.put(unitKey, { exposed, counts: new Array<number>(guards).fill(0) });
    const tallyKey = key(this.rollout.id, step, exposed ? "exposed" : "control");
    const tally = this.store.table("rolloutTallies").get(tallyKey) ?? emptyTally(guards);
    this.store.table("rolloutTallies").put(tallyKey, { ...tally, units: tally.units + 1 });
  }

  count(record: EventRecord, guard: number): void {
    const unit = this.rollout.attribute === "user.id" ? record.userId : record.countsForCompanyId;
    if (unit === null) return;
    const step = this.stepAt(record.receivedAt);
    if (step < 0) return;
    const unitKey = key(this.rollout.id, step, unit);
    const member = this.store.table("rolloutUnits").get(unitKey);
    if (member === undefined) return;
    const before = member.counts[guard] ?? 0;
    const counts = [...member.counts];
    counts[guard] = before + 1;
    this.store.table("rolloutUnits").put(unitKey, { ...member, counts });
    const tallyKey = key(this.rollout.id, step, member.exposed ? "exposed" : "control");
    const tally = this.store.table("rolloutTallies").get(tallyKey) ?? emptyTally(this.rollout.guards.length);
    const sums = [...tally.sums];
    const sumsOfSquares = [...tally.sumsOfSquares];
    sums[guard] = (sums[guard] ?? 0) + 1;
    // (c + 1)² − c²: the square of the unit's count grows by 2c + 1.
    sumsOfSquares[guard] = (sumsOfSquares[guard] ?? 0) + 2 * before + 1;
    this.store.table("rolloutTallies").put(tallyKey, { units: tally.units, sums, sumsOfSquares });
  }
}

const NOTHING_FOLLOWED: ProjectionWriter = {};

export const ROLLOUT_PROJECTION: TrackingProjection = {
  name: "rollouts",
  open(store, environmentId) {
    const active = new RolloutRepository(store).activeIn(environmentId);
    if (active.length === 0) return NOTHING_FOLLOWED;
    const byFeature = new Map<string, FollowedRollout>();
    const byEvent = new Map<string, { followed: FollowedRollout; guard: number }[]>();
    for (const rollout of active) {
      const followed = new FollowedRollout(store, rollout);
      byFeature.set(rollout.featureKey, followed);
      rollout.guards.forEach((guard, index) => {
        const list = byEvent.get(guard.event) ?? [];
        list.push({ followed, guard: index });
        byEvent.set(guard.event, list);
      });
    }
    return {
      featureEvent(record) {
        const followed = byFeature.get(record.key);
        if (followed !== undefined && EXPOSURE_ACTIONS.has(record.action)) followed.exposure(record);
      },
      event(record) {
        const guards = byEvent.get(record.event);
        if (guards !== undefined) for (const { followed, guard } of guards) followed.count(record, guard);
      },
    };
  },
};
