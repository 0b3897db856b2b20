/**
 * What a rollout's current step has seen: exposures per group, each guard's reading (sequential-test.ts) and the
 * sample-ratio check, from the exposure projection's tallies.
 */
import { judgeGuard, sampleRatio, type GroupSums, type SampleRatio } from "../../analytics/sequential-test.js";
import type { GuardReading, RolloutRecord, RolloutTally, StepEvidence } from "./rollout-records.js";
import type { RolloutRepository } from "./rollout-repository.js";

export interface StepReading extends StepEvidence {
  /** Null when not checked (too few units, or the base rules hash on the rollout's own key). */
  sampleRatio: SampleRatio | null;
}

function sumsOf(tally: RolloutTally, guard: number): GroupSums {
  return { units: tally.units, sum: tally.sums[guard] ?? 0, sumOfSquares: tally.sumsOfSquares[guard] ?? 0 };
}

/** Steps whose guards are tested: all but the last, which completes the rollout at once. */
export function testedSteps(rollout: Pick<RolloutRecord, "steps">): number {
  return Math.max(1, rollout.steps.length - 1);
}

/** The reading of one step from its two groups' tallies. */
export function readStep(rollout: RolloutRecord, step: number, exposed: RolloutTally, control: RolloutTally): StepReading {
  const guards: GuardReading[] = rollout.guards.map((guard, index) => {
    const verdict = judgeGuard(sumsOf(exposed, index), sumsOf(control, index), guard, testedSteps(rollout));
    const change = verdict.change;
    return { event: guard.event, estimate: change?.estimate ?? null, interval: change ? [change.lower, change.upper] : null, breached: verdict.breached };
  });
  const percent = rollout.steps[step] ?? 100;
  const ratio = rollout.sampleRatioChecked ? sampleRatio(exposed.units, control.units, percent / 100) : null;
  return { exposures: { exposed: exposed.units, control: control.units }, guards, sampleRatio: ratio };
}

/** The current step's reading from the store. */
export function currentReading(rollout: RolloutRecord, rollouts: RolloutRepository): StepReading {
  const guards = rollout.guards.length;
  return readStep(rollout, rollout.step, rollouts.tally(rollout.id, rollout.step, "exposed", guards), rollouts.tally(rollout.id, rollout.step, "control", guards));
}

/** The part of a reading a decision carries into the record. */
export function evidenceOf(reading: StepReading): StepEvidence {
  return { exposures: reading.exposures, guards: reading.guards };
}
