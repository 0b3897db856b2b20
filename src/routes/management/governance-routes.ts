/** API.md §15 through the management API: the kill switch, each environment's policy, and change requests. */
import * as v from "valibot";
import { ok } from "../../http/responses.js";
import { ServiceError } from "../../errors/catalogue.js";
import { FeatureKey } from "../../schemas/admin.js";
import { CreateChangeRequestBody, KillSwitchBody, PolicyBody, ReviewBody, UpdateChangeRequestBody } from "../../schemas/governance.js";
import { parseOrThrow } from "../../schemas/issues.js";
import { validateConfig, validateTargeting } from "../../schemas/rules.js";
import { segmentRefs } from "../../management/segments/inline.js";
import { SegmentRepository } from "../../management/segments/segment-repository.js";
import { randomBase62 } from "../../tenancy/identifiers.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { PolicyRepository } from "../../management/governance/policy.js";
import { prerequisiteIssues } from "../../management/governance/prerequisite-checks.js";
import { ChangeRequestRepository } from "../../management/governance/change-request-repository.js";
import { CHANGE_REQUEST_STATES, type ProposedChange } from "../../management/governance/change-request-records.js";
import { environmentOrNotFound } from "../core/route-lookups.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import type { Services } from "../core/services.js";
import { presentChangeRequest } from "./present-change-request.js";

type Context = RouteContext<Services>;

const read = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("read", BODY_LIMITS.none, handle);
const write = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("write", BODY_LIMITS.admin, handle);

/**
 * Every proposed change checked as its direct write would be: a 400 at `changes.N.…`. Segments named must exist;
 * prerequisites pass the direct write's checks, cycles through other changes of the request included.
 * A feature listed twice is refused: a request holds one change per feature.
 */
function checkedChanges(context: Context, environment: EnvironmentRecord, changes: ProposedChange[]): ProposedChange[] {
  const issues: { path: string; message: string }[] = [];
  const segments = new SegmentRepository(context.services.store);
  const seen = new Set<string>();
  const graph = context.services.features.prerequisiteGraph(environment.id, environment.appId);
  changes.forEach((change, index) => {
    if (seen.has(change.feature)) issues.push({ path: `changes.${index}.feature`, message: `${change.feature} is listed twice` });
    seen.add(change.feature);
    if (!context.services.features.getFeature(environment.appId, change.feature)) issues.push({ path: `changes.${index}.feature`, message: `No feature ${change.feature}` });
    if (change.targeting !== undefined) {
      const validated = validateTargeting(change.targeting, { segments: true });
      if (!validated.ok) for (const issue of validated.issues) issues.push({ path: `changes.${index}.targeting${issue.path ? `.${issue.path}` : ""}`, message: issue.message });
      for (const id of segmentRefs(change.targeting)) if (!segments.getSegment(environment.appId, id)) issues.push({ path: `changes.${index}.targeting.rules`, message: `No segment ${id} in app ${environment.appId}` });
    }
    if (change.config !== undefined) {
      const validated = validateConfig(change.config);
      if (!validated.ok) for (const issue of validated.issues) issues.push({ path: `changes.${index}.config${issue.path ? `.${issue.path}` : ""}`, message: issue.message });
    }
    if (change.prerequisites !== undefined) {
      // Checked against the graph with the request's earlier changes in it: two changes that close a cycle together are refused.
      const found = prerequisiteIssues(context.services.features, environment.appId, change.feature, change.prerequisites, graph, `changes.${index}.prerequisites`);
      issues.push(...found);
      if (found.length === 0) graph.set(change.feature, change.prerequisites);
    }
  });
  if (issues.length > 0) throw new ServiceError("INVALID_BODY", undefined, issues);
  // Stored as saved: only the lists, not whatever else the client sent beside them.
  return changes.map((change) => ({
    feature: change.feature,
    ...(change.targeting ? { targeting: { rules: change.targeting.rules } } : {}),
    ...(change.config ? { config: { variants: change.config.variants } } : {}),
    ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
    ...(change.prerequisites ? { prerequisites: change.prerequisites.map(({ feature, enabled }) => ({ feature, enabled })) } : {}),
  }));
}

function futureOrThrow(scheduledAt: string | null | undefined, now: string): string | null | undefined {
  if (scheduledAt === undefined || scheduledAt === null) return scheduledAt;
  const utc = new Date(scheduledAt).toISOString();
  if (utc <= now) throw new ServiceError("INVALID_BODY", undefined, [{ path: "scheduledAt", message: "must be in the future" }]);
  return utc;
}

function requestOrNotFound(context: Context, environment: EnvironmentRecord) {
  const request = new ChangeRequestRepository(context.services.store).get(environment.id, context.params.requestId!);
  if (!request) throw new ServiceError("NOT_FOUND", `No change request ${context.params.requestId}.`);
  return request;
}

const requestAction = (type: "change-request.apply" | "change-request.cancel") =>
  write(async (context) => {
    const environment = environmentOrNotFound(context);
    const result = await submitChange(context, type, { environmentId: environment.id, requestId: context.params.requestId! });
    return ok({ changeRequest: presentChangeRequest(context.services, result.changeRequest), ...("flagStateVersion" in result ? { flagStateVersion: result.flagStateVersion } : {}) });
  });

export const GOVERNANCE_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "PUT",
    "/admin/environments/:envId/features/:key/enabled",
    write(async (context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = parseOrThrow(v.safeParse, FeatureKey, context.params.key, "INVALID_REQUEST");
      const { enabled } = schemaBody(context.request, KillSwitchBody);
      const result = await submitChange(context, "feature.enabled", { environmentId: environment.id, featureKey, enabled });
      return ok({ key: featureKey, enabled: result.enabled, changed: result.changed, flagStateVersion: result.flagStateVersion });
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/policy",
    read((context) => ok({ policy: new PolicyRepository(context.services.store).policyOf(environmentOrNotFound(context)) })),
  ],
  [
    "PUT",
    "/admin/environments/:envId/policy",
    // Owners and the admin token only: the permission only they hold.
    managementRoute<Services>("members", BODY_LIMITS.admin, async (context) => {
      const environment = environmentOrNotFound(context);
      const policy = schemaBody(context.request, PolicyBody);
      const result = await submitChange(context, "policy.put", { environmentId: environment.id, policy });
      return ok({ policy: result.policy });
    }),
  ],
  [
    "POST",
    "/admin/environments/:envId/change-requests",
    write(async (context) => {
      const environment = environmentOrNotFound(context);
      const body = schemaBody(context.request, CreateChangeRequestBody);
      const envelope = envelopeFor(context);
      const changes = checkedChanges(context, environment, body.changes as ProposedChange[]);
      const scheduledAt = futureOrThrow(body.scheduledAt, envelope.at) ?? null;
      const requestId = `cr_${randomBase62(16)}`;
      const change = { environmentId: environment.id, requestId, title: body.title, description: body.description ?? null, changes, scheduledAt };
      const { changeRequest } = await submitChange(context, "change-request.create", change, envelope);
      return ok({ changeRequest: presentChangeRequest(context.services, changeRequest) });
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/change-requests",
    read((context) => {
      const environment = environmentOrNotFound(context);
      const state = new URLSearchParams(context.request.query).get("state");
      if (state !== null && !(CHANGE_REQUEST_STATES as readonly string[]).includes(state)) {
        throw new ServiceError("INVALID_QUERY", undefined, [{ path: "state", message: `must be one of ${CHANGE_REQUEST_STATES.join(", ")}` }]);
      }
      const all = new ChangeRequestRepository(context.services.store).list(environment.id);
      const listed = state === null ? all : all.filter((request) => request.state === state);
      return ok({ changeRequests: listed.map((request) => presentChangeRequest(context.services, request)) });
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/change-requests/:requestId",
    read((context) => {
      const environment = environmentOrNotFound(context);
      return ok({ changeRequest: presentChangeRequest(context.services, requestOrNotFound(context, environment)) });
    }),
  ],
  [
    "PUT",
    "/admin/environments/:envId/change-requests/:requestId",
    write(async (context) => {
      const environment = environmentOrNotFound(context);
      requestOrNotFound(context, environment);
      const body = schemaBody(context.request, UpdateChangeRequestBody);
      const envelope = envelopeFor(context);
      const changes = body.changes === undefined ? undefined : checkedChanges(context, environment, body.changes as ProposedChange[]);
      const scheduledAt = futureOrThrow(body.scheduledAt, envelope.at);
      const change = {
        environmentId: environment.id,
        requestId: context.params.requestId!,
        ...(body.title !== undefined ? { title: body.title } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(changes !== undefined ? { changes } : {}),
        ...(scheduledAt !== undefined ? { scheduledAt } : {}),
      };
      const { changeRequest } = await submitChange(context, "change-request.update", change, envelope);
      return ok({ changeRequest: presentChangeRequest(context.services, changeRequest) });
    }),
  ],
  [
    "POST",
    "/admin/environments/:envId/change-requests/:requestId/reviews",
    write(async (context) => {
      const environment = environmentOrNotFound(context);
      const body = schemaBody(context.request, ReviewBody);
      const change = { environmentId: environment.id, requestId: context.params.requestId!, decision: body.decision, comment: body.comment ?? null, revision: body.revision ?? null };
      const { changeRequest } = await submitChange(context, "change-request.review", change);
      return ok({ changeRequest: presentChangeRequest(context.services, changeRequest) });
    }),
  ],
  ["POST", "/admin/environments/:envId/change-requests/:requestId/apply", requestAction("change-request.apply")],
  ["POST", "/admin/environments/:envId/change-requests/:requestId/cancel", requestAction("change-request.cancel")],
];
