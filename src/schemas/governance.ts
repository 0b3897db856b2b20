/** Bodies of API.md §15's governance routes. `comment`, `bypass` and `reason` are read by every write (change-notes). */
import * as v from "valibot";
import { FeatureKey } from "./admin.js";

export const KillSwitchBody = v.object({
  enabled: v.boolean("enabled must be true or false"),
});

export const PolicyBody = v.object({
  requireApproval: v.optional(v.boolean("requireApproval must be true or false")),
  minApprovals: v.optional(v.pipe(v.number("minApprovals must be a number"), v.integer("minApprovals must be a whole number"), v.minValue(1, "minApprovals must be 1 to 5"), v.maxValue(5, "minApprovals must be 1 to 5"))),
  allowSelfApproval: v.optional(v.boolean("allowSelfApproval must be true or false")),
  confirmChanges: v.optional(v.boolean("confirmChanges must be true or false")),
});

/** ISO 8601 with a zone, read as UTC. */
const Timestamp = v.pipe(
  v.string("must be an ISO 8601 time"),
  v.check((text) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text) && !Number.isNaN(Date.parse(text)), "must be an ISO 8601 time with a zone"),
);

const PrerequisiteList = v.pipe(
  v.array(
    v.object({
      feature: FeatureKey,
      enabled: v.boolean("enabled must be true or false"),
    }),
    "prerequisites must be an array",
  ),
  v.maxLength(20, "a feature may have at most 20 prerequisites"),
);

const ProposedChangeSchema = v.pipe(
  v.object({
    feature: FeatureKey,
    targeting: v.optional(v.looseObject({ rules: v.array(v.unknown(), "rules must be an array") })),
    config: v.optional(v.looseObject({ variants: v.array(v.unknown(), "variants must be an array") })),
    enabled: v.optional(v.boolean("enabled must be true or false")),
    prerequisites: v.optional(PrerequisiteList),
  }),
  v.check(
    (change) => change.targeting !== undefined || change.config !== undefined || change.enabled !== undefined || change.prerequisites !== undefined,
    "a change needs targeting, config, enabled or prerequisites",
  ),
);

const Changes = v.pipe(v.array(ProposedChangeSchema, "changes must be an array"), v.minLength(1, "changes must not be empty"), v.maxLength(100, "changes may hold at most 100 features"));
const Title = v.pipe(v.string("title must be a string"), v.trim(), v.minLength(1, "title must not be empty"), v.maxLength(200, "title must be at most 200 characters"));
const Description = v.nullable(v.pipe(v.string("description must be a string"), v.maxLength(5000, "description must be at most 5000 characters")));

export const CreateChangeRequestBody = v.object({
  title: Title,
  description: v.optional(Description),
  changes: Changes,
  scheduledAt: v.optional(v.nullable(Timestamp)),
});

export const UpdateChangeRequestBody = v.object({
  title: v.optional(Title),
  description: v.optional(Description),
  changes: v.optional(Changes),
  scheduledAt: v.optional(v.nullable(Timestamp)),
});

export const ReviewBody = v.object({
  decision: v.picklist(["approve", "reject"], 'decision must be "approve" or "reject"'),
  comment: v.optional(v.pipe(v.string("comment must be a string"), v.maxLength(500, "comment must be at most 500 characters"))),
  revision: v.optional(v.pipe(v.number("revision must be a number"), v.integer("revision must be a whole number"), v.minValue(1, "revision starts at 1"))),
});

/** `PUT …/features/:key/prerequisites`: the whole list (an empty one removes them). */
export const PrerequisitesBody = v.object({
  prerequisites: PrerequisiteList,
});

/** `POST …/features/:key/promote`: the environment of the same app to copy the feature's rules and config to. */
export const PromoteBody = v.object({
  to: v.pipe(v.string("to must be an environment id"), v.minLength(1, "to must not be empty"), v.maxLength(255, "to must be at most 255 characters")),
  title: v.optional(v.pipe(v.string("title must be a string"), v.trim(), v.minLength(1, "title must not be empty"), v.maxLength(200, "title must be at most 200 characters"))),
});
