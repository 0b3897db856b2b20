/**
 * The MCP side of API.md §15: where an environment requires approval, set_flag_targeting proposes its rules as a
 * change request (the same change the management API's POST …/change-requests submits) and says so; agents can list
 * and read the requests of an environment to follow one through review.
 */
import { ServiceError } from "../../errors/catalogue.js";
import { ChangeRequestRepository } from "../../management/governance/change-request-repository.js";
import { PolicyRepository } from "../../management/governance/policy.js";
import type { ChangeRequestState } from "../../management/governance/change-request-records.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { randomBase62 } from "../../tenancy/identifiers.js";
import type { RouteContext } from "../core/route.js";
import type { Services } from "../core/services.js";
import { submitChange } from "../core/submit.js";
import { presentChangeRequest } from "../management/present-change-request.js";
import { appOrError, environmentOrError } from "./lookups.js";
import { serviceOrigin } from "./service-origin.js";
import type { SetFlagTargeting } from "./tool-inputs.js";

type Context = RouteContext<Services>;

/** The dashboard page of one change request (docs/API.md §9), for the agent to hand to a person. */
function dashboardLink(context: Context, environment: EnvironmentRecord, requestId: string): string {
  const origin = serviceOrigin(context.request, context.services.config.accounts.publicOrigin);
  return `${origin}/dashboard/#/apps/${encodeURIComponent(environment.appId)}/environments/${encodeURIComponent(environment.id)}/change-requests/${encodeURIComponent(requestId)}`;
}

export async function proposeTargeting(context: Context, environment: EnvironmentRecord, input: SetFlagTargeting, rules: unknown[]) {
  const requestId = `cr_${randomBase62(16)}`;
  const change = {
    environmentId: environment.id,
    requestId,
    title: input.title ?? `Set targeting of ${input.key}`,
    description: input.description ?? null,
    changes: [{ feature: input.key, targeting: { rules } }],
    scheduledAt: null,
  };
  const { changeRequest } = await submitChange(context, "change-request.create", change);
  const policy = new PolicyRepository(context.services.store).policyOf(environment);
  const link = dashboardLink(context, environment, changeRequest.id);
  const approvals = `${policy.minApprovals} approval${policy.minApprovals === 1 ? "" : "s"}`;
  return {
    proposed: true,
    message:
      `${environment.name} requires approval, so nothing was written: change request ${changeRequest.id} ("${changeRequest.title}") is ${changeRequest.state} ` +
      `and awaits review (${approvals}${policy.allowSelfApproval ? "" : ", not by its author"}). Once approved, an editor applies it; the dashboard shows it at ${link}.`,
    changeRequest: { ...presentChangeRequest(context.services, changeRequest), url: link },
  };
}

function scopeOf(context: Context, input: { appId: string; environmentId: string }): EnvironmentRecord {
  return environmentOrError(context, appOrError(context, input.appId), input.environmentId);
}

export function listChangeRequests(context: Context, input: { appId: string; environmentId: string; state?: ChangeRequestState }) {
  const environment = scopeOf(context, input);
  const all = new ChangeRequestRepository(context.services.store).list(environment.id);
  const listed = input.state === undefined ? all : all.filter((request) => request.state === input.state);
  // A summary per request: the diffs of every change of every request would swamp an agent's context.
  return {
    changeRequests: listed.map((request) => ({
      id: request.id,
      title: request.title,
      state: request.state,
      revision: request.revision,
      features: request.changes.map((change) => change.feature),
      createdBy: request.createdBy,
      createdAt: request.createdAt,
      scheduledAt: request.scheduledAt,
      appliedAt: request.appliedAt,
    })),
  };
}

export function getChangeRequest(context: Context, input: { appId: string; environmentId: string; id: string }) {
  const environment = scopeOf(context, input);
  const request = new ChangeRequestRepository(context.services.store).get(environment.id, input.id);
  if (!request) throw new ServiceError("NOT_FOUND", `id: no change request ${input.id} in environment ${environment.id}; list_change_requests gives the ids.`, [{ path: "id", message: "no such change request" }]);
  return { changeRequest: { ...presentChangeRequest(context.services, request), url: dashboardLink(context, environment, request.id) } };
}
