/** Warnings for a rollout about to start: a guard on an event this environment never counted. */
import { AGGREGATE_KINDS } from "../../analytics/keys.js";
import { prefixRange, type KvStore } from "../../storage/kv.js";
import type { RolloutGuard } from "./rollout-records.js";

/**
 * Whether the environment's analytics counted the event at all (usage cells exist for events counted for a company;
 * an event only ever tracked for users without a company is not seen here, so this only warns).
 */
function everCounted(store: KvStore, environmentId: string, event: string): boolean {
  for (const _ of store.table("aggregates").range({ ...prefixRange(environmentId, AGGREGATE_KINDS.usage, event), limit: 1 })) return true;
  return false;
}

export function guardWarnings(store: KvStore, environmentId: string, guards: RolloutGuard[]): { path: string; message: string }[] {
  return guards.flatMap((guard, index) =>
    everCounted(store, environmentId, guard.event)
      ? []
      : [{ path: `guards.${index}.event`, message: `No "${guard.event}" event was ever tracked in this environment: the guard sees nothing until it is (a misspelt name?).` }],
  );
}
