/**
 * The MCP tools (API.md §12): name, what an agent reads about it, its input schema, the permission it needs from the
 * one role table (src/accounts/roles.ts) and what it does (flag-operations.ts).
 */
import type * as v from "valibot";
import type { Permission } from "../../accounts/roles.js";
import type { RouteContext } from "../core/route.js";
import type { Services } from "../core/services.js";
import { createFlag, FEEDBACK_LIMIT, flagUsage, getFlag, listApps, listFeedback, listFlags, setFlagTargeting } from "./flag-operations.js";
import { getChangeRequest, listChangeRequests } from "./change-request-operations.js";
import { CreateFlagInput, FlagUsageInput, GetChangeRequestInput, GetFlagInput, ListAppsInput, ListChangeRequestsInput, ListFeedbackInput, ListFlagsInput, SetFlagTargetingInput } from "./tool-inputs.js";
import { STALE_DAYS } from "./stale-flags.js";
import { ROLLOUT_TOOLS } from "./rollout-tools.js";

export interface Tool<S extends v.GenericSchema = v.GenericSchema> {
  name: string;
  title: string;
  description: string;
  input: S;
  /** `read` tools are open to every role; `write` ones need a role that may change flags (never a read-only token). */
  permission: Extract<Permission, "read" | "write">;
  run(context: RouteContext<Services>, input: v.InferOutput<S>): unknown;
}

const tool = <S extends v.GenericSchema>(definition: Tool<S>): Tool => definition as unknown as Tool;

const ERRORS_NOTE = "Errors come back as a result with isError: true whose text names the field or the reason.";

export const TOOLS: readonly Tool[] = [
  tool({
    name: "list_apps",
    title: "List apps",
    description: `Lists the Switchyard apps this token can see, each with its environments (id, name, isProduction). Start here: every other tool needs an appId, and targeting needs an environmentId. Changes nothing.`,
    input: ListAppsInput,
    permission: "read",
    run: (context) => listApps(context),
  }),
  tool({
    name: "list_flags",
    title: "List feature flags",
    description: `Lists the feature flags of one app: key, name, description, stage, createdAt, and stale. stale is true for a flag at least ${STALE_DAYS} days old that either nothing evaluated for ${STALE_DAYS} days (staleReason "unevaluated") or that every environment has served the same answer to everyone for ${STALE_DAYS} days (staleReason "constant"): a candidate for removing the flag from the code. Changes nothing. ${ERRORS_NOTE}`,
    input: ListFlagsInput,
    permission: "read",
    run: (context, input) => listFlags(context, input.appId),
  }),
  tool({
    name: "get_flag",
    title: "Get a feature flag",
    description: `Shows one flag with its targeting in every environment: {flag: {key, name, description, stage, environments: [{id, name, version, rules, enabled}]}}. Empty rules mean off for everyone; enabled false means the kill switch holds it off for everyone, its rules kept. Changes nothing. ${ERRORS_NOTE}`,
    input: GetFlagInput,
    permission: "read",
    run: (context, input) => getFlag(context, input.appId, input.key),
  }),
  tool({
    name: "create_flag",
    title: "Create a feature flag",
    description: `Creates a flag in an app, off everywhere until targeted (use set_flag_targeting next). Answers {flag: {key, id, name, description, stage, createdAt}}. A key that already exists is an error; the write is audited with this token as actor. Needs a token that may write. ${ERRORS_NOTE}`,
    input: CreateFlagInput,
    permission: "write",
    run: (context, input) => createFlag(context, input),
  }),
  tool({
    name: "set_flag_targeting",
    title: "Set who gets a feature flag",
    description: `Replaces a flag's targeting in one environment and pushes the change to connected SDKs at once. Give exactly one of: enabled (true: everyone, false: nobody); companyIds and/or userIds (on for exactly those companies/users, off for everyone else); or rules (the full rule list). Answers {version, flagStateVersion, rules}; every version is kept in the flag's history and the write is audited with this token as actor. Where the environment's policy requires approval, nothing is written: the rules become a change request (title and description from this call, or a default title) and the answer is {proposed: true, message, changeRequest: {id, state, revision, changes, url, …}}; a person approves it in the dashboard, then it is applied (follow it with get_change_request). Needs a token that may write. ${ERRORS_NOTE}`,
    input: SetFlagTargetingInput,
    permission: "write",
    run: (context, input) => setFlagTargeting(context, input),
  }),
  tool({
    name: "list_change_requests",
    title: "List change requests",
    description: `Lists the change requests of one environment, newest first (optionally only one state): {changeRequests: [{id, title, state, revision, features, createdBy, createdAt, scheduledAt, appliedAt}]}. States: open (awaits review), approved, scheduled, applied, rejected, cancelled, suspended (a scheduled apply met a conflict). Changes nothing. ${ERRORS_NOTE}`,
    input: ListChangeRequestsInput,
    permission: "read",
    run: (context, input) => listChangeRequests(context, input),
  }),
  tool({
    name: "get_change_request",
    title: "Get a change request",
    description: `Shows one change request: {changeRequest: {id, title, description, state, revision, changes: [{feature, base, targeting, config, diff}], approvals, reviews, createdBy, scheduledAt, appliedAt, suspendedReason, url}}; each change's diff compares it with the feature's rules as they are now, rule by rule (added, removed, changed, unchanged). Changes nothing. ${ERRORS_NOTE}`,
    input: GetChangeRequestInput,
    permission: "read",
    run: (context, input) => getChangeRequest(context, input),
  }),
  tool({
    name: "flag_usage",
    title: "Feature flag usage",
    description: `Company-level figures for one flag in one environment over the last 30 days, as the analytics API gives them: companies per adoption state (none, tried, retained, churned, adopted), satisfaction from feedback, and how many companies were exposed. Changes nothing. ${ERRORS_NOTE}`,
    input: FlagUsageInput,
    permission: "read",
    run: (context, input) => flagUsage(context, input),
  }),
  tool({
    name: "list_feedback",
    title: "List feedback",
    description: `Feedback users gave in one environment (optionally on one flag), newest first, at most ${FEEDBACK_LIMIT}: {feedback: [{feedbackId, userId, companyId, countsForCompanyId, key, score, comment, question, timestamp, …}]} (countsForCompanyId: the company its satisfaction counts for — its companyId, else its user's company when it was sent). Changes nothing. ${ERRORS_NOTE}`,
    input: ListFeedbackInput,
    permission: "read",
    run: (context, input) => listFeedback(context, input),
  }),
  ...ROLLOUT_TOOLS.map((definition) => tool(definition as Tool)),
];
