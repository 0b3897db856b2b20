/**
 * Rollouts per environment (`rollouts`, keyed (environment id, rollout id)), the active one per feature
 * (`activeRollouts`), and the exposure projection's per-step cohorts (`rolloutUnits`, `rolloutTallies`).
 */
import { key, prefixRange, type KvStore } from "../../storage/kv.js";
import { ACTIVE_STATES, type RolloutRecord, type RolloutTally } from "./rollout-records.js";

export type GroupName = "exposed" | "control";

export function emptyTally(guards: number): RolloutTally {
  return { units: 0, sums: new Array<number>(guards).fill(0), sumsOfSquares: new Array<number>(guards).fill(0) };
}

export class RolloutRepository {
  constructor(private readonly store: KvStore) {}

  get(environmentId: string, rolloutId: string): RolloutRecord | undefined {
    return this.store.table("rollouts").get(key(environmentId, rolloutId));
  }

  /** A feature's rollouts in an environment, newest first. */
  listForFeature(environmentId: string, featureKey: string): RolloutRecord[] {
    const all = [...this.store.table("rollouts").range(prefixRange(environmentId))].map((entry) => entry.value).filter((rollout) => rollout.featureKey === featureKey);
    return all.sort((a, b) => (a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt)));
  }

  /** Every rollout of an environment, newest first. */
  listIn(environmentId: string): RolloutRecord[] {
    const all = [...this.store.table("rollouts").range(prefixRange(environmentId))].map((entry) => entry.value);
    return all.sort((a, b) => (a.createdAt === b.createdAt ? b.id.localeCompare(a.id) : b.createdAt.localeCompare(a.createdAt)));
  }

  activeId(environmentId: string, featureKey: string): string | undefined {
    return this.store.table("activeRollouts").get(key(environmentId, featureKey));
  }

  /** The active rollouts of one environment (what the exposure projection follows). */
  activeIn(environmentId: string): RolloutRecord[] {
    const found: RolloutRecord[] = [];
    for (const { value } of this.store.table("activeRollouts").range(prefixRange(environmentId))) {
      const rollout = this.get(environmentId, value);
      if (rollout) found.push(rollout);
    }
    return found;
  }

  /** Every active rollout of every environment: what the driver watches. */
  allActive(): RolloutRecord[] {
    const found: RolloutRecord[] = [];
    for (const { key: compositeKey, value } of this.store.table("activeRollouts").range({})) {
      const environmentId = compositeKey.slice(0, compositeKey.indexOf("\u0000"));
      const rollout = this.get(environmentId, value);
      if (rollout) found.push(rollout);
    }
    return found;
  }

  /** Inside a write transaction: stores the rollout and keeps the active index in step with its state. */
  put(rollout: RolloutRecord): void {
    this.store.table("rollouts").put(key(rollout.environmentId, rollout.id), rollout);
    const activeKey = key(rollout.environmentId, rollout.featureKey);
    if (ACTIVE_STATES.has(rollout.state)) this.store.table("activeRollouts").put(activeKey, rollout.id);
    else if (this.store.table("activeRollouts").get(activeKey) === rollout.id) this.store.table("activeRollouts").remove(activeKey);
  }

  tally(rolloutId: string, step: number, group: GroupName, guards: number): RolloutTally {
    return this.store.table("rolloutTallies").get(key(rolloutId, step, group)) ?? emptyTally(guards);
  }

  /**
   * Inside a write transaction: drops what the projection derived for an ended rollout (its evidence stays in the
   * record). A rebuild projects only active rollouts, so this keeps a rebuild equal to the live projection.
   */
  dropProjected(rolloutId: string): void {
    for (const table of ["rolloutUnits", "rolloutTallies"] as const) {
      const stale = Array.from(this.store.table(table).range(prefixRange(rolloutId)), (entry) => entry.key);
      for (const each of stale) this.store.table(table).remove(each);
    }
  }
}
