/**
 * The input of each MCP tool (API.md §12) as a valibot schema: validated here, and converted to the JSON Schema the
 * tool list advertises (@valibot/to-json-schema), so the two never drift apart. Descriptions on fields are what an
 * agent reads when it fills them in.
 */
import * as v from "valibot";
import { FeatureKey } from "../../schemas/admin.js";
import { CHANGE_REQUEST_STATES } from "../../management/governance/change-request-records.js";

const id = (what: string) => v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(128, "must be at most 128 characters"), v.description(what));

const appId = id("The app's id, as list_apps returns it.");
const environmentId = id("An environment id of that app, as list_apps returns it (e.g. production's).");
const flagKey = v.pipe(FeatureKey, v.description("The flag's key, as the code checks it (e.g. `huddle`); 1..255 printable characters."));
const identifiers = (what: string) =>
  v.pipe(
    v.array(v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(256, "must be at most 256 characters")), "must be an array of strings"),
    v.minLength(1, "must list at least one id"),
    v.maxLength(1000, "must list at most 1000 ids"),
    v.description(what),
  );

export const ListAppsInput = v.strictObject({});
export const ListFlagsInput = v.strictObject({ appId });
export const GetFlagInput = v.strictObject({ appId, key: flagKey });
export const CreateFlagInput = v.strictObject({
  appId,
  key: flagKey,
  name: v.optional(v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"), v.maxLength(128, "must be at most 128 characters"), v.description("Display name; defaults to the key."))),
  description: v.optional(v.pipe(v.string("must be a string"), v.maxLength(4000, "must be at most 4000 characters"), v.description("What the flag guards, for people reading the flag list."))),
});
export const SetFlagTargetingInput = v.strictObject({
  appId,
  key: flagKey,
  environmentId,
  enabled: v.optional(v.pipe(v.boolean("must be a boolean"), v.description("true: on for everyone; false: off for everyone. Not combined with companyIds, userIds or rules."))),
  companyIds: v.optional(identifiers("On for exactly these company ids (the SDK context's company.id); may be combined with userIds.")),
  userIds: v.optional(identifiers("On for exactly these user ids (the SDK context's user.id); may be combined with companyIds.")),
  rules: v.optional(
    v.pipe(
      v.array(v.unknown(), "must be an array of rules"),
      v.description("Advanced: the full rule list, as the management API takes it: [{filter}], a filter being constant, context, rolloutPercentage, group or negation. Replaces everything else."),
    ),
  ),
  title: v.optional(
    v.pipe(
      v.string("must be a string"),
      v.trim(),
      v.minLength(1, "must not be empty"),
      v.maxLength(200, "must be at most 200 characters"),
      v.description("Where the environment requires approval, the change becomes a change request with this title (default: \"Set targeting of <key>\"). Say what and why, for the reviewer."),
    ),
  ),
  description: v.optional(v.pipe(v.string("must be a string"), v.maxLength(5000, "must be at most 5000 characters"), v.description("The change request's description, where one is made: the reason, links, how to verify."))),
});
export const FlagUsageInput = v.strictObject({ appId, key: flagKey, environmentId });
export const ListFeedbackInput = v.strictObject({
  appId,
  environmentId,
  key: v.optional(v.pipe(FeatureKey, v.description("Only feedback on this flag."))),
});

const changeRequestId = id("A change request's id (cr_…), as list_change_requests or set_flag_targeting returns it.");
export const ListChangeRequestsInput = v.strictObject({
  appId,
  environmentId,
  state: v.optional(
    v.pipe(v.picklist([...CHANGE_REQUEST_STATES], `must be one of ${CHANGE_REQUEST_STATES.join(", ")}`), v.description("Only requests in this state (open, approved, scheduled: still pending).")),
  ),
});
export const GetChangeRequestInput = v.strictObject({ appId, environmentId, id: changeRequestId });

export type SetFlagTargeting = v.InferOutput<typeof SetFlagTargetingInput>;
