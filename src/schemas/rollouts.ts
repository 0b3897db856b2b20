/** The body of `POST …/features/:key/rollouts` (API.md §17). */
import * as v from "valibot";

export const DEFAULT_ROLLOUT_STEPS = [1, 5, 10, 25, 50, 100];
const MAX_STEPS = 20;
/** A year: the dashboard offers minutes to days. */
const MAX_STEP_SECONDS = 366 * 86_400;

const Percent = v.pipe(
  v.number("each step must be a number"),
  v.minValue(1, "each step must be 1 to 100 (percent)"),
  v.maxValue(100, "each step must be 1 to 100 (percent)"),
  // The rule's threshold is in thousandths of a percent.
  v.check((percent) => Number.isInteger(Math.round(percent * 1000)) && Math.abs(percent * 1000 - Math.round(percent * 1000)) < 1e-9, "a step has at most three decimals"),
);

const Steps = v.pipe(
  v.array(Percent, "steps must be an array of percents"),
  v.minLength(1, "steps must not be empty"),
  v.maxLength(MAX_STEPS, `steps may hold at most ${MAX_STEPS} percents`),
  v.check((steps) => steps.every((percent, index) => index === 0 || percent > steps[index - 1]!), "steps must be strictly increasing"),
);

const Guard = v.object({
  event: v.pipe(v.string("event must be a string"), v.minLength(1, "event must not be empty"), v.maxLength(255, "event must be at most 255 characters")),
  direction: v.picklist(["lower_is_better", "higher_is_better"], 'direction must be "lower_is_better" or "higher_is_better"'),
  maxRelativeChange: v.pipe(v.number("maxRelativeChange must be a number"), v.gtValue(0, "maxRelativeChange must be above 0"), v.maxValue(10, "maxRelativeChange must be at most 10 (1000 %)")),
  alpha: v.optional(v.pipe(v.number("alpha must be a number"), v.gtValue(0, "alpha must be above 0"), v.maxValue(0.5, "alpha must be at most 0.5")), 0.05),
});

export const StartRolloutBody = v.object({
  steps: v.optional(Steps, DEFAULT_ROLLOUT_STEPS),
  stepSeconds: v.pipe(v.number("stepSeconds must be a number"), v.integer("stepSeconds must be a whole number"), v.minValue(1, "stepSeconds must be at least 1"), v.maxValue(MAX_STEP_SECONDS, "stepSeconds must be at most a year")),
  minExposures: v.optional(v.pipe(v.number("minExposures must be a number"), v.integer("minExposures must be a whole number"), v.minValue(1, "minExposures must be at least 1"), v.maxValue(10_000_000, "minExposures must be at most 10000000")), 100),
  attribute: v.optional(v.picklist(["company.id", "user.id"], 'attribute must be "company.id" or "user.id"'), "company.id"),
  guards: v.optional(v.pipe(v.array(Guard, "guards must be an array"), v.maxLength(10, "at most 10 guards")), []),
  onBreach: v.optional(v.picklist(["rollback", "pause"], 'onBreach must be "rollback" or "pause"'), "rollback"),
});

export type StartRolloutInput = v.InferOutput<typeof StartRolloutBody>;

export const RolloutActionBody = v.object({
  reason: v.optional(v.pipe(v.string("reason must be a string"), v.maxLength(500, "reason must be at most 500 characters"))),
});
