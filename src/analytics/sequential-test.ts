/**
 * The statistics of guarded rollouts (API.md §17), pure: a confidence sequence for the relative change of a guard's
 * per-unit event count between the exposed and the control group, valid under continuous monitoring, and a
 * sample-ratio check.
 *
 * Method: the mixture sequential probability ratio test (mSPRT) of Johari, Pekelis and Walsh, "Always Valid
 * Inference: Continuous Monitoring of A/B Tests" (Operations Research, 2022; arXiv:1512.04922, 2015/2017), with a
 * normal mixture of variance τ² (Robbins' normal-mixture boundary; Howard, Ramdas, McAuliffe, Sekhon, "Time-uniform,
 * nonparametric, nonasymptotic confidence sequences", Annals of Statistics 2021, §3). For an estimate θ̂ ~ N(θ, V)
 * the set of θ with |θ̂ − θ| ≤ √(V(V+τ²)/τ² · (ln((V+τ²)/V) + 2 ln(1/α))) holds θ at every look at once with
 * probability ≥ 1 − α, so the groups may be compared after every tracked event without inflating the error.
 *
 * The parameter is the log ratio of the groups' mean counts, θ = ln(μ_exposed / μ_control), estimated by the ratio of
 * the sample means with the delta method's variance V = s²ₓ/(nₓ x̄²) + s²ᵧ/(nᵧ ȳ²). A ratio, not a difference, because
 * the guard's limit is relative (`maxRelativeChange`) and the log makes the two groups' noise additive; the
 * normal approximation is why the test waits for MIN_UNITS per group. Half an event is added to each group's total
 * (a continuity correction) so a group with no events yet has a finite log mean.
 */

/** Running sums of one group's per-unit counts. */
export interface GroupSums {
  units: number;
  sum: number;
  sumOfSquares: number;
}

export type GuardDirection = "lower_is_better" | "higher_is_better";

export interface GuardSpec {
  direction: GuardDirection;
  /** The largest relative change tolerated on the worse side (0.1: 10 %). */
  maxRelativeChange: number;
  alpha: number;
}

/** A relative change (exposed / control − 1) with its always-valid interval. */
export interface RelativeChange {
  estimate: number;
  lower: number;
  upper: number;
}

export interface GuardVerdict {
  /** Null until both groups hold MIN_UNITS units. */
  change: RelativeChange | null;
  breached: boolean;
}

/** Units per group before the normal approximation is trusted and a guard may breach. */
export const MIN_UNITS = 30;

const CONTINUITY = 0.5;

/** The normal-mixture boundary: the half-width of the (1 − alpha) confidence sequence of an estimate of variance `variance`. */
export function mixtureHalfWidth(variance: number, mixingVariance: number, alpha: number): number {
  const v = variance;
  const t = mixingVariance;
  return Math.sqrt(((v * (v + t)) / t) * (Math.log((v + t) / v) + 2 * Math.log(1 / alpha)));
}

function groupMoments(group: GroupSums): { mean: number; varianceOfLogMean: number } {
  const mean = (group.sum + CONTINUITY) / group.units;
  const rawMean = group.sum / group.units;
  const sampleVariance = group.units > 1 ? Math.max(0, (group.sumOfSquares - group.units * rawMean * rawMean) / (group.units - 1)) : 0;
  // A group whose units all counted alike (all zero, say) would claim no noise at all; half an event's worth keeps V > 0.
  const variance = Math.max(sampleVariance, CONTINUITY / group.units);
  return { mean, varianceOfLogMean: variance / (group.units * mean * mean) };
}

/**
 * The mixing variance: it tunes which effects the sequence detects soonest (Johari et al. §4). A guard is there to
 * stop harm quickly: tuned to a doubling or halving (ln 2 on the log scale), or to twice the guard's limit where
 * that is larger.
 */
export function mixingVarianceFor(maxRelativeChange: number): number {
  const tau = Math.max(Math.LN2, 2 * Math.log1p(maxRelativeChange));
  return tau * tau;
}

/** The relative change of the exposed group's mean over the control's with its (1 − alpha) confidence sequence. */
export function relativeChange(exposed: GroupSums, control: GroupSums, alpha: number, mixingVariance: number): RelativeChange | null {
  if (exposed.units < MIN_UNITS || control.units < MIN_UNITS) return null;
  const x = groupMoments(exposed);
  const y = groupMoments(control);
  const logRatio = Math.log(x.mean / y.mean);
  const halfWidth = mixtureHalfWidth(x.varianceOfLogMean + y.varianceOfLogMean, mixingVariance, alpha);
  return { estimate: Math.exp(logRatio) - 1, lower: Math.exp(logRatio - halfWidth) - 1, upper: Math.exp(logRatio + halfWidth) - 1 };
}

/**
 * A guard's verdict for one step. `tests`: how many steps of the rollout are tested; each gets alpha / tests
 * (Bonferroni), so a whole rollout's false-alarm rate per guard stays within alpha. A breach: the whole interval
 * lies beyond the limit on the worse side.
 */
export function judgeGuard(exposed: GroupSums, control: GroupSums, guard: GuardSpec, tests: number): GuardVerdict {
  const change = relativeChange(exposed, control, guard.alpha / Math.max(1, tests), mixingVarianceFor(guard.maxRelativeChange));
  if (change === null) return { change, breached: false };
  const breached = guard.direction === "lower_is_better" ? change.lower > guard.maxRelativeChange : change.upper < -guard.maxRelativeChange;
  return { change, breached };
}

export interface SampleRatio {
  observedShare: number;
  lower: number;
  upper: number;
  mismatch: boolean;
}

/** A strict level: a mismatch means the exposure data cannot be trusted, which pauses the rollout rather than rolls it back. */
export const SAMPLE_RATIO_ALPHA = 0.001;

/**
 * Sample-ratio mismatch: the exposed share of the step's units against the share the step's percent predicts, with
 * the same normal-mixture confidence sequence on the proportion (variance p(1−p)/n at the expected p; a mixing
 * variance tuned to shifts of a few points). Null below MIN_UNITS units in either group.
 */
export function sampleRatio(exposedUnits: number, controlUnits: number, expectedShare: number, alpha = SAMPLE_RATIO_ALPHA): SampleRatio | null {
  const total = exposedUnits + controlUnits;
  if (exposedUnits < MIN_UNITS || controlUnits < MIN_UNITS || expectedShare <= 0 || expectedShare >= 1) return null;
  const observedShare = exposedUnits / total;
  const variance = (expectedShare * (1 - expectedShare)) / total;
  const halfWidth = mixtureHalfWidth(variance, SRM_MIXING_VARIANCE, alpha);
  const lower = observedShare - halfWidth;
  const upper = observedShare + halfWidth;
  return { observedShare, lower, upper, mismatch: expectedShare < lower || expectedShare > upper };
}

const SRM_MIXING_VARIANCE = 0.02 * 0.02;
