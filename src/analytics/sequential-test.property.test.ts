/**
 * The guard statistics measured by seeded simulation: under the null hypothesis the confidence sequence holds the
 * truth at every look of a run (continuous monitoring) in at least 1 − alpha of runs, a guard breaches an A/A
 * comparison at most alpha of the time, a doubled error rate is caught, and the sample-ratio check keeps its level.
 * docs/ROLLOUTS.md quotes the rates these print.
 */
import { describe, expect, it } from "vitest";
import { judgeGuard, relativeChange, sampleRatio, mixingVarianceFor, type GroupSums } from "./sequential-test.js";
import { poisson, seededRandom } from "../../bench/support/seeded-random.js";

const empty = (): GroupSums => ({ units: 0, sum: 0, sumOfSquares: 0 });
function add(group: GroupSums, count: number): void {
  group.units++;
  group.sum += count;
  group.sumOfSquares += count * count;
}

interface Run {
  /** Whether the interval missed the true relative change at any look. */
  missed: boolean;
  /** The first unit count at which a guard breached, or null. */
  breachedAt: number | null;
}

/** One run: `units` units arrive one by one, exposed with probability `share`; every arrival is a look. */
function simulate(seed: number, options: { units: number; share: number; controlMean: number; exposedMean: number; alpha: number; maxRelativeChange: number; direction: "lower_is_better" | "higher_is_better"; bernoulli?: boolean }): Run {
  const random = seededRandom(seed);
  const exposed = empty();
  const control = empty();
  const truth = options.exposedMean / options.controlMean - 1;
  const mixing = mixingVarianceFor(options.maxRelativeChange);
  const guard = { direction: options.direction, maxRelativeChange: options.maxRelativeChange, alpha: options.alpha };
  let missed = false;
  let breachedAt: number | null = null;
  for (let unit = 1; unit <= options.units; unit++) {
    const isExposed = random() < options.share;
    const mean = isExposed ? options.exposedMean : options.controlMean;
    const count = options.bernoulli ? (random() < mean ? 1 : 0) : poisson(random, mean);
    add(isExposed ? exposed : control, count);
    const change = relativeChange(exposed, control, options.alpha, mixing);
    if (change !== null && (truth < change.lower || truth > change.upper)) missed = true;
    if (breachedAt === null && judgeGuard(exposed, control, guard, 1).breached) breachedAt = unit;
  }
  return { missed, breachedAt };
}

/** The largest rate a binomial count of `runs` trials at `rate` plausibly shows: rate + 3 standard deviations. */
function upperMargin(rate: number, runs: number): number {
  return rate + 3 * Math.sqrt((rate * (1 - rate)) / runs);
}

const RUNS = 1000;

describe("the guard's confidence sequence under continuous monitoring (seeded simulations)", () => {
  it.each([
    { name: "Poisson errors, even split", share: 0.5, controlMean: 0.3, bernoulli: false },
    { name: "Poisson errors, 10 % exposed", share: 0.1, controlMean: 0.3, bernoulli: false },
    { name: "conversions (0/1), 25 % exposed", share: 0.25, controlMean: 0.2, bernoulli: true },
  ])("covers the true (null) change at every look in ≥ 1 − alpha of runs: $name", ({ share, controlMean, bernoulli }) => {
    const alpha = 0.05;
    let misses = 0;
    for (let seed = 1; seed <= RUNS; seed++) {
      if (simulate(seed, { units: 2000, share, controlMean, exposedMean: controlMean, alpha, maxRelativeChange: 0.1, direction: "lower_is_better", bernoulli }).missed) misses++;
    }
    console.info(`null coverage (${share} exposed): ${RUNS - misses}/${RUNS} runs covered at every look`);
    expect(misses / RUNS).toBeLessThanOrEqual(upperMargin(alpha, RUNS));
  });

  it("covers a true non-null change too (exposed mean 1.5 × control)", () => {
    const alpha = 0.05;
    let misses = 0;
    for (let seed = 1; seed <= RUNS; seed++) {
      if (simulate(seed, { units: 2000, share: 0.5, controlMean: 0.3, exposedMean: 0.45, alpha, maxRelativeChange: 0.1, direction: "lower_is_better" }).missed) misses++;
    }
    console.info(`coverage at ratio 1.5: ${RUNS - misses}/${RUNS}`);
    expect(misses / RUNS).toBeLessThanOrEqual(upperMargin(alpha, RUNS));
  });

  it("an A/A guard breaches in at most alpha of runs, for either direction", () => {
    const alpha = 0.05;
    for (const direction of ["lower_is_better", "higher_is_better"] as const) {
      let breaches = 0;
      for (let seed = 1; seed <= RUNS; seed++) {
        if (simulate(seed + 10_000, { units: 2000, share: 0.3, controlMean: 0.3, exposedMean: 0.3, alpha, maxRelativeChange: 0.1, direction }).breachedAt !== null) breaches++;
      }
      console.info(`A/A false breaches (${direction}): ${breaches}/${RUNS}`);
      expect(breaches / RUNS).toBeLessThanOrEqual(upperMargin(alpha, RUNS));
    }
  });

  it("catches a doubled error rate in nearly every run, within a few hundred units", () => {
    const breachedAt: number[] = [];
    for (let seed = 1; seed <= RUNS; seed++) {
      const run = simulate(seed + 20_000, { units: 2000, share: 0.5, controlMean: 0.3, exposedMean: 0.6, alpha: 0.05, maxRelativeChange: 0.1, direction: "lower_is_better" });
      if (run.breachedAt !== null) breachedAt.push(run.breachedAt);
    }
    breachedAt.sort((a, b) => a - b);
    const median = breachedAt[Math.floor(breachedAt.length / 2)];
    console.info(`doubled error rate: caught in ${breachedAt.length}/${RUNS} runs, median at ${median} units`);
    expect(breachedAt.length / RUNS).toBeGreaterThanOrEqual(0.99);
  });

  it("catches a halved conversion rate with a higher_is_better guard, and never flags a real lift", () => {
    let caught = 0;
    let liftFlagged = 0;
    for (let seed = 1; seed <= RUNS; seed++) {
      if (simulate(seed + 30_000, { units: 2000, share: 0.5, controlMean: 0.3, exposedMean: 0.15, alpha: 0.05, maxRelativeChange: 0.1, direction: "higher_is_better", bernoulli: true }).breachedAt !== null) caught++;
      if (simulate(seed + 40_000, { units: 2000, share: 0.5, controlMean: 0.2, exposedMean: 0.3, alpha: 0.05, maxRelativeChange: 0.1, direction: "higher_is_better", bernoulli: true }).breachedAt !== null) liftFlagged++;
    }
    console.info(`halved conversions caught: ${caught}/${RUNS}; real lift flagged: ${liftFlagged}/${RUNS}`);
    expect(caught / RUNS).toBeGreaterThanOrEqual(0.99);
    expect(liftFlagged).toBe(0);
  });

  it("waits for enough units and splits alpha over the tested steps", () => {
    const few = { units: 29, sum: 100, sumOfSquares: 1000 };
    const many = { units: 500, sum: 100, sumOfSquares: 150 };
    expect(relativeChange(few, many, 0.05, 0.04)).toBeNull();
    const worse = { units: 500, sum: 150, sumOfSquares: 250 };
    const once = judgeGuard(worse, many, { direction: "lower_is_better", maxRelativeChange: 0.1, alpha: 0.05 }, 1);
    const split = judgeGuard(worse, many, { direction: "lower_is_better", maxRelativeChange: 0.1, alpha: 0.05 }, 5);
    expect(split.change!.lower).toBeLessThan(once.change!.lower);
    expect(split.change!.upper).toBeGreaterThan(once.change!.upper);
  });
});

describe("the sample-ratio check", () => {
  it("keeps its level under the expected split, checked at every arrival", () => {
    let alarms = 0;
    for (let seed = 1; seed <= RUNS; seed++) {
      const random = seededRandom(seed + 50_000);
      let exposed = 0;
      let control = 0;
      for (let unit = 0; unit < 3000; unit++) {
        if (random() < 0.1) exposed++;
        else control++;
        if (sampleRatio(exposed, control, 0.1)?.mismatch) {
          alarms++;
          break;
        }
      }
    }
    console.info(`sample-ratio false alarms: ${alarms}/${RUNS}`);
    expect(alarms / RUNS).toBeLessThanOrEqual(upperMargin(0.001, RUNS));
  });

  it("flags a split far from the step's share", () => {
    expect(sampleRatio(300, 700, 0.1)?.mismatch).toBe(true);
    expect(sampleRatio(100, 900, 0.1)?.mismatch).toBe(false);
    expect(sampleRatio(10, 900, 0.1)).toBeNull();
  });
});
