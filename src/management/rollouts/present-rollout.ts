/**
 * A rollout as the API answers it (API.md §17): its steps with exposures per group, each guard's estimate and
 * always-valid interval on the current step (the last step's evidence once it ended), and the sample-ratio check.
 */
import { ACTIVE_STATES, type RolloutRecord } from "./rollout-records.js";
import { readStep, type StepReading } from "./rollout-evidence.js";
import type { RolloutRepository } from "./rollout-repository.js";

function liveReading(rollout: RolloutRecord, rollouts: RolloutRepository, step: number): StepReading {
  const guards = rollout.guards.length;
  return readStep(rollout, step, rollouts.tally(rollout.id, step, "exposed", guards), rollouts.tally(rollout.id, step, "control", guards));
}

export function presentRollout(rollout: RolloutRecord, rollouts: RolloutRepository) {
  const active = ACTIVE_STATES.has(rollout.state);
  const current = active ? liveReading(rollout, rollouts, rollout.step) : null;
  const finalEvidence = rollout.stepRecords[rollout.step]?.evidence ?? null;
  const steps = rollout.stepRecords.map((step, index) => {
    const exposures = index === rollout.step && current ? current.exposures : (step.evidence?.exposures ?? (active && step.startedAt !== null ? liveReading(rollout, rollouts, index).exposures : { exposed: 0, control: 0 }));
    return { percent: step.percent, startedAt: step.startedAt, targetingVersion: step.targetingVersion, exposures };
  });
  const readings = current?.guards ?? finalEvidence?.guards ?? [];
  const guards = rollout.guards.map((guard, index) => {
    const reading = readings[index];
    return { ...guard, estimate: reading?.estimate ?? null, interval: reading?.interval ?? null, breached: reading?.breached ?? false };
  });
  return {
    id: rollout.id,
    environmentId: rollout.environmentId,
    feature: rollout.featureKey,
    state: rollout.state,
    step: rollout.step,
    percent: rollout.steps[rollout.step],
    reason: rollout.reason,
    attribute: rollout.attribute,
    stepSeconds: rollout.stepSeconds,
    minExposures: rollout.minExposures,
    onBreach: rollout.onBreach,
    steps,
    guards,
    sampleRatio: current?.sampleRatio ?? null,
    before: { version: rollout.base.version, rules: rollout.base.segmentRules ?? rollout.base.rules },
    transitions: rollout.transitions,
    createdBy: rollout.createdBy,
    createdAt: rollout.createdAt,
    updatedAt: rollout.updatedAt,
    endedAt: rollout.endedAt,
  };
}
