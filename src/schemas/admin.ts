import * as v from "valibot";

const name = v.pipe(v.string("must be a string"), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(128, "must be at most 128 characters"));
const optionalText = (maximum: number) =>
  v.optional(v.nullable(v.pipe(v.string("must be a string or null"), v.maxLength(maximum, `must be at most ${maximum} characters`))));

export const CreateAppBody = v.strictObject({ name }, "must be an object with only: name");
export const CreateEnvironmentBody = v.strictObject({ name }, "must be an object with only: name");
export const RotateKeyBody = v.strictObject({ kind: v.picklist(["publishable", "secret"], "must be publishable or secret") });

/** Feature keys appear in URLs, SDK calls and event names: keep them printable and bounded. */
export const FeatureKey = v.pipe(
  v.string(),
  v.minLength(1, "must not be empty"),
  v.maxLength(255, "must be at most 255 characters"),
  v.regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters"),
);

/** A feature's display name (Reflag's flags have one); null goes back to showing the key. */
export const FeatureName = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.minLength(1, "must not be empty"),
  v.maxLength(255, "must be at most 255 characters"),
  v.regex(/^[^\u0000-\u001f\u007f]+$/, "must not contain control characters"),
);

export const PutFeatureBody = v.strictObject(
  {
    name: v.optional(v.nullable(FeatureName)),
    description: optionalText(4000),
    link: optionalText(2048),
    stage: optionalText(128),
    optInEnabled: v.optional(v.boolean("must be a boolean")),
    usageEvents: v.optional(
      v.pipe(
        v.array(v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(255, "must be at most 255 characters"))),
        v.maxLength(100, "must list at most 100 event names"),
      ),
    ),
  },
  "must be an object with only: name, description, link, stage, optInEnabled, usageEvents",
);
