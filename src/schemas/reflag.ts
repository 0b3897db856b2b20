/** What the Reflag CLI (`@reflag/cli` 1.0.4) sends to `/api` (API.md §10), checked before anything reads it. */
import * as v from "valibot";
import { FeatureKey, FeatureName } from "./admin.js";

/** The CLI sends booleans in the query as `true`/`false` (zod's `booleanish` also takes `1`/`0`). */
const Booleanish = v.pipe(
  v.picklist(["true", "false", "1", "0"], "must be true, false, 1 or 0"),
  v.transform((value) => value === "true" || value === "1"),
);

const PageNumber = (minimum: number, maximum: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,6}$/, "must be a whole number"),
    v.transform(Number),
    v.minValue(minimum, `must be at least ${minimum}`),
    v.maxValue(maximum, `must be at most ${maximum}`),
  );

export const FLAG_SORT_FIELDS = ["key", "name", "createdAt", "stage"] as const;

export const FlagsQuery = v.strictObject(
  {
    envId: v.pipe(v.string(), v.minLength(1, "must not be empty")),
    sortBy: v.optional(v.picklist(FLAG_SORT_FIELDS, `must be one of ${FLAG_SORT_FIELDS.join(", ")}`), "key"),
    sortOrder: v.optional(v.picklist(["asc", "desc"], "must be asc or desc"), "asc"),
    includeRemoteConfigs: v.optional(Booleanish, "false"),
    pageIndex: v.optional(PageNumber(0, 1_000_000)),
    pageSize: v.optional(PageNumber(1, 100)),
  },
  "must have only: envId, sortBy, sortOrder, includeRemoteConfigs, pageIndex, pageSize",
);

/** `source` is what the CLI adds (`"event"`); Reflag's meaning of it does not apply here, so it is accepted and ignored. */
export const CreateFlagBody = v.strictObject(
  {
    name: FeatureName,
    key: FeatureKey,
    description: v.optional(v.nullable(v.pipe(v.string("must be a string"), v.maxLength(4000, "must be at most 4000 characters")))),
    source: v.optional(v.pipe(v.string("must be a string"), v.maxLength(64, "must be at most 64 characters"))),
  },
  "must be an object with only: name, key, description, source",
);
