/**
 * The driver's decision for a running rollout, pure: what its current step's reading and the time say to do. A
 * breach acts at once; a step advances only when its time passed, both groups reached `minExposures` units and no
 * guard breached.
 */
import type { RolloutRecord } from "./rollout-records.js";
import type { StepReading } from "./rollout-evidence.js";

export type RolloutDecision =
  | { action: "wait" }
  | { action: "advance"; reason: null }
  | { action: "rollback" | "pause"; reason: string };

export function decide(rollout: Pick<RolloutRecord, "state" | "step" | "stepRecords" | "stepSeconds" | "minExposures" | "onBreach">, reading: StepReading, now: number): RolloutDecision {
  if (rollout.state !== "running") return { action: "wait" };
  const breached = reading.guards.filter((guard) => guard.breached);
  if (breached.length > 0) {
    const what = breached.map((guard) => `${guard.event} changed by ${percentText(guard.estimate!)} (interval ${percentText(guard.interval![0])} to ${percentText(guard.interval![1])})`);
    return { action: rollout.onBreach, reason: `Guard breached: ${what.join("; ")}.` };
  }
  if (reading.sampleRatio?.mismatch) {
    const ratio = reading.sampleRatio;
    return { action: "pause", reason: `Sample ratio mismatch: ${percentText(ratio.observedShare)} of the step's units are exposed (interval ${percentText(ratio.lower)} to ${percentText(ratio.upper)}); the exposure data cannot be trusted.` };
  }
  const startedAt = rollout.stepRecords[rollout.step]?.startedAt;
  const timeUp = startedAt !== null && startedAt !== undefined && now - Date.parse(startedAt) >= rollout.stepSeconds * 1000;
  const enough = reading.exposures.exposed >= rollout.minExposures && reading.exposures.control >= rollout.minExposures;
  return timeUp && enough ? { action: "advance", reason: null } : { action: "wait" };
}

function percentText(fraction: number): string {
  return `${(fraction * 100).toFixed(1)} %`;
}
