import type { RolloutSlot } from "./rollout-hash.js";

/** What the closures of one evaluation share: the context's field values and where missing fields are reported. */
export interface EvaluationScope {
  /** The flattened context's value of each field the filters read, indexed by field id (see compileFilter). */
  values: ArrayLike<string | undefined>;
  /** Ids of the fields reported missing by the rule list being evaluated, in first-report order: the first `missingCount`. */
  readonly missing: Int32Array;
  missingCount: number;
  /**
   * The rollout slots of the ruleset (see RolloutCaches.slotFor), and this evaluation's bucket of each (-1: not yet;
   * below -1: hashed ahead and not read yet, see rollout-slots.ts).
   */
  readonly slots: readonly RolloutSlot[];
  readonly buckets: Int32Array;
  /**
   * This evaluation's bucket row of each field with rollouts (by RolloutSlot.rowsIndex): undefined until a rollout on
   * the field is read, null while its rows are bypassed (see rollout-slots.ts).
   */
  readonly rows: (Int32Array | null | undefined)[];
  /** Evaluations since the slots were last judged for speculation (see rollout-slots.ts). */
  evaluations: number;
}
