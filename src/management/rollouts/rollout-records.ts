/** Guarded rollouts (API.md §17) as stored: the rollout itself, and what the exposure projection derives per step. */
import type { Actor } from "../../accounts/principal.js";
import type { GuardDirection } from "../../analytics/sequential-test.js";

export const ROLLOUT_STATES = ["running", "paused", "rolled_back", "completed", "cancelled"] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];
/** The states in which a rollout still holds its feature (one per feature and environment). */
export const ACTIVE_STATES: ReadonlySet<RolloutState> = new Set(["running", "paused"]);

export type RolloutAttribute = "company.id" | "user.id";

export interface RolloutGuard {
  event: string;
  direction: GuardDirection;
  maxRelativeChange: number;
  alpha: number;
}

/** What a rollout is asked to do, as validated by the route. */
export interface RolloutSettings {
  steps: number[];
  stepSeconds: number;
  minExposures: number;
  attribute: RolloutAttribute;
  guards: RolloutGuard[];
  onBreach: "rollback" | "pause";
}

/** A guard's estimate at a decision: the relative change exposed / control − 1 and its always-valid interval. */
export interface GuardReading {
  event: string;
  estimate: number | null;
  interval: [number, number] | null;
  breached: boolean;
}

/** The data a decision was taken on, carried by the change (so every node stores the same) and kept per step. */
export interface StepEvidence {
  exposures: { exposed: number; control: number };
  guards: GuardReading[];
}

export interface RolloutStepRecord {
  percent: number;
  /** Null until the step is reached. */
  startedAt: string | null;
  /** The targeting version the step wrote. */
  targetingVersion: number | null;
  /** What the step had seen when the rollout left it (advanced, paused for good, rolled back, completed). */
  evidence: StepEvidence | null;
}

export interface RolloutTransition {
  at: string;
  action: string;
  step: number;
  reason: string | null;
}

export interface RolloutRecord extends RolloutSettings {
  id: string;
  environmentId: string;
  appId: string;
  featureKey: string;
  state: RolloutState;
  /** Index into `stepRecords` of the current step. */
  step: number;
  stepRecords: RolloutStepRecord[];
  /** The targeting from before the rollout: served rules, and as saved when they name segments. */
  base: { version: number; rules: unknown[]; segmentRules?: unknown[] };
  /** The targeting version the rollout last wrote: another one now means someone edited the targeting by hand. */
  writtenVersion: number;
  /** Whether the step's percent predicts the exposed share (false when the base rules hash on the same key). */
  sampleRatioChecked: boolean;
  reason: string | null;
  transitions: RolloutTransition[];
  createdBy: Actor;
  createdAt: string;
  updatedAt: string;
  endedAt: string | null;
}

/** One unit's membership in a step's cohort: its group, and its count of each guard's event since it joined. */
export interface RolloutUnitRecord {
  exposed: boolean;
  counts: number[];
}

/** The running sums of one group of one step: units, and per guard the sum and sum of squares of the counts. */
export interface RolloutTally {
  units: number;
  sums: number[];
  sumsOfSquares: number[];
}

declare module "../../storage/kv.js" {
  /** The value types of the tables rollouts own (see TableValues). */
  interface TableValues {
    rollouts: RolloutRecord;
    /** (environment id, feature key) → the id of the feature's active rollout there. */
    activeRollouts: string;
    /** (rollout id, step, unit) → the unit's cohort membership: projected from the tracking log. */
    rolloutUnits: RolloutUnitRecord;
    /** (rollout id, step, "exposed" | "control") → the group's sums: projected from the tracking log. */
    rolloutTallies: RolloutTally;
  }
}
