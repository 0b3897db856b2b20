/** Bodies of the release-stage routes (API.md §10). Targeting trees are checked by the rules validator after these. */
import * as v from "valibot";
import { CHANGE_NOTE_FIELDS } from "./change-note-fields.js";

export const StageName = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(1, "must not be empty"),
  v.maxLength(64, "must be at most 64 characters"),
  v.regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters"),
);

const Order = v.pipe(v.number("must be a number"), v.integer("must be an integer"), v.minValue(0, "must be at least 0"), v.maxValue(10_000, "must be at most 10000"));

/** `{<environmentId>: {rules: [...]}}`; each value is validated as §6 targeting by the route. */
const StageTargeting = v.record(v.pipe(v.string(), v.minLength(1, "must not be empty")), v.unknown(), "must be an object of environment ids");

export const CreateStageBody = v.strictObject(
  { name: StageName, order: v.optional(Order), targeting: v.optional(StageTargeting) },
  "must be an object with only: name, order, targeting",
);

export const UpdateStageBody = v.strictObject(
  { name: v.optional(StageName), order: v.optional(Order), targeting: v.optional(StageTargeting), reapply: v.optional(v.boolean("must be a boolean")), ...CHANGE_NOTE_FIELDS },
  "must be an object with only: name, order, targeting, reapply, comment, bypass, reason",
);

export const SetFeatureStageBody = v.strictObject(
  { stage: v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(128, "must be at most 128 characters")), ...CHANGE_NOTE_FIELDS },
  "must be an object with only: stage (a stage id or name), comment, bypass, reason",
);
