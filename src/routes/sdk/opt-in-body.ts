import * as v from "valibot";
import { FeatureKey } from "../../schemas/admin.js";
import { MAX_ID_LENGTH } from "../../schemas/tracking-fields.js";

/** A user or company id: a non-empty string or a finite number (the node SDKs pass numbers through), as a string. */
const EntityId = v.pipe(
  v.union(
    [
      v.pipe(
        v.string(),
        v.minLength(1, "must not be empty"),
        v.maxLength(MAX_ID_LENGTH, `must be at most ${MAX_ID_LENGTH} characters`),
        // U+0000 separates the parts of store keys.
        v.regex(/^[^\u0000]*$/, "must not contain U+0000"),
      ),
      v.pipe(v.number(), v.finite("must be a finite number")),
    ],
    "must be a non-empty string or a number",
  ),
  v.transform(String),
);

const Entity = v.nullish(v.looseObject({ id: v.nullish(EntityId) }, "must be an object"));

/**
 * `POST /flags/opt-in` (API.md §5), as the Reflag browser SDK's `setOptIn` sends it:
 * `{key, optedIn, scope, context: {user, company, other}}`. Loose, like the tracking bodies: unknown keys are ignored.
 * `scope` defaults to `user`, as in the SDK.
 */
export const OptInBody = v.looseObject(
  {
    key: FeatureKey,
    optedIn: v.boolean("must be a boolean"),
    scope: v.optional(v.picklist(["user", "company"], 'must be "user" or "company"'), "user"),
    context: v.optional(v.looseObject({ user: Entity, company: Entity }, "must be an object"), {}),
  },
  "must be an object",
);

export type OptInBodyOutput = v.InferOutput<typeof OptInBody>;
