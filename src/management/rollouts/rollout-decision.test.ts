/**
 * The driver's decisions on simulated data, through the same tallies and readings the service uses: 20 seeded A/A
 * rollouts on the default steps all complete without a breach or a sample-ratio pause; a doubled error rate is
 * rolled back (or paused, as onBreach says) in the first steps; a step waits for its time and both groups' units.
 */
import { describe, expect, it } from "vitest";
import { decide } from "./rollout-decision.js";
import { readStep } from "./rollout-evidence.js";
import type { RolloutRecord, RolloutTally } from "./rollout-records.js";
import { emptyTally } from "./rollout-repository.js";
import { poisson, seededRandom } from "../../../bench/support/seeded-random.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");

function rollout(overrides: Partial<RolloutRecord> = {}): RolloutRecord {
  const steps = overrides.steps ?? [1, 5, 10, 25, 50, 100];
  return {
    id: "ro_test",
    environmentId: "env",
    appId: "app",
    featureKey: "huddle",
    state: "running",
    step: 0,
    steps,
    stepRecords: steps.map((percent, index) => ({ percent, startedAt: index === 0 ? new Date(T0).toISOString() : null, targetingVersion: null, evidence: null })),
    stepSeconds: 60,
    minExposures: 100,
    attribute: "company.id",
    guards: [
      { event: "error", direction: "lower_is_better", maxRelativeChange: 0.1, alpha: 0.05 },
      { event: "converted", direction: "higher_is_better", maxRelativeChange: 0.1, alpha: 0.05 },
    ],
    onBreach: "rollback",
    base: { version: 1, rules: [] },
    writtenVersion: 2,
    sampleRatioChecked: true,
    reason: null,
    transitions: [],
    createdBy: { kind: "admin", id: "admin" },
    createdAt: new Date(T0).toISOString(),
    updatedAt: new Date(T0).toISOString(),
    endedAt: null,
    ...overrides,
  };
}

function addUnit(tally: RolloutTally, counts: number[]): void {
  tally.units++;
  counts.forEach((count, guard) => {
    tally.sums[guard]! += count;
    tally.sumsOfSquares[guard]! += count * count;
  });
}

/**
 * Plays a rollout: units arrive one by one, each in the step's share with its percent's probability, with Poisson
 * error counts and 0/1 conversions at the given means per group; the driver looks after every arrival, a second of
 * simulated time passing per 10 units. Ends when the rollout ends or a step sees 200,000 units.
 */
function play(seed: number, means: { exposed: [number, number]; control: [number, number] }, overrides: Partial<RolloutRecord> = {}) {
  const random = seededRandom(seed);
  const record = rollout(overrides);
  const actions: string[] = [];
  let now = T0;
  for (;;) {
    const percent = record.steps[record.step]!;
    const exposed = emptyTally(2);
    const control = emptyTally(2);
    let decided = false;
    for (let unit = 0; unit < 200_000 && !decided; unit++) {
      const isExposed = random() * 100 < percent;
      const [errorMean, conversion] = isExposed ? means.exposed : means.control;
      addUnit(isExposed ? exposed : control, [poisson(random, errorMean), random() < conversion ? 1 : 0]);
      if (unit % 10 === 0) now += 1000;
      const decision = decide(record, readStep(record, record.step, exposed, control), now);
      if (decision.action === "wait") continue;
      decided = true;
      actions.push(decision.action);
      if (decision.action !== "advance") return { actions, step: record.step, state: decision.action === "rollback" ? "rolled_back" : "paused", reason: decision.reason };
      record.step++;
      record.stepRecords[record.step]!.startedAt = new Date(now).toISOString();
      if (record.step === record.steps.length - 1) return { actions, step: record.step, state: "completed", reason: null };
    }
    if (!decided) return { actions, step: record.step, state: "stuck", reason: null };
  }
}

describe("the driver's decision on simulated data", () => {
  it("completes 20 seeded A/A rollouts on the default steps, never breaching nor pausing", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const outcome = play(seed, { exposed: [0.3, 0.2], control: [0.3, 0.2] });
      expect(outcome, `seed ${seed}`).toEqual({ actions: ["advance", "advance", "advance", "advance", "advance"], step: 5, state: "completed", reason: null });
    }
  });

  it("rolls back a doubled error rate within the first steps, naming the guard", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const outcome = play(seed + 100, { exposed: [0.6, 0.2], control: [0.3, 0.2] });
      expect(outcome.state, `seed ${seed}`).toBe("rolled_back");
      expect(outcome.step).toBeLessThanOrEqual(2);
      expect(outcome.reason).toMatch(/^Guard breached: error changed by \+?[0-9.]+ %/);
    }
  });

  it("pauses instead where onBreach says so, and completes a real conversion lift", () => {
    // A halved 20 % conversion rate needs more units per step than the default to be seen before the last step.
    expect(play(7, { exposed: [0.3, 0.1], control: [0.3, 0.2] }, { onBreach: "pause", minExposures: 400 }).state).toBe("paused");
    expect(play(8, { exposed: [0.3, 0.3], control: [0.3, 0.2] }).state).toBe("completed");
  });

  it("advances only when the step's time passed and both groups hold minExposures units", () => {
    // An even split of units at 1 % would be a sample-ratio mismatch: the split is not what this case is about.
    const record = rollout({ stepSeconds: 60, minExposures: 50, sampleRatioChecked: false });
    const enough = { ...emptyTally(2), units: 60 };
    const few = { ...emptyTally(2), units: 49 };
    expect(decide(record, readStep(record, 0, enough, enough), T0 + 59_000).action).toBe("wait");
    expect(decide(record, readStep(record, 0, few, enough), T0 + 61_000).action).toBe("wait");
    expect(decide(record, readStep(record, 0, enough, few), T0 + 61_000).action).toBe("wait");
    expect(decide(record, readStep(record, 0, enough, enough), T0 + 61_000).action).toBe("advance");
    expect(decide({ ...record, state: "paused" }, readStep(record, 0, enough, enough), T0 + 61_000).action).toBe("wait");
  });

  it("pauses on a sample-ratio mismatch, unless the base rules make the split unpredictable", () => {
    const record = rollout({ steps: [10, 100], stepRecords: [{ percent: 10, startedAt: new Date(T0).toISOString(), targetingVersion: 2, evidence: null }, { percent: 100, startedAt: null, targetingVersion: null, evidence: null }] });
    const exposed = { ...emptyTally(2), units: 500 };
    const control = { ...emptyTally(2), units: 500 };
    const decision = decide(record, readStep(record, 0, exposed, control), T0);
    expect(decision).toMatchObject({ action: "pause" });
    expect((decision as { reason: string }).reason).toMatch(/^Sample ratio mismatch: 50.0 %/);
    expect(decide({ ...record, sampleRatioChecked: false }, readStep({ ...record, sampleRatioChecked: false }, 0, exposed, control), T0).action).toBe("wait");
  });
});
