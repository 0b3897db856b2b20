/** API.md §15's promotion between environments and prerequisites, through the management API. */
import * as v from "valibot";
import { ok } from "../../http/responses.js";
import { ServiceError } from "../../errors/catalogue.js";
import { FeatureKey } from "../../schemas/admin.js";
import { PrerequisitesBody, PromoteBody } from "../../schemas/governance.js";
import { parseOrThrow } from "../../schemas/issues.js";
import { randomBase62 } from "../../tenancy/identifiers.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import type { ProposedChange } from "../../management/governance/change-request-records.js";
import { environmentOrNotFound } from "../core/route-lookups.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import type { Services } from "../core/services.js";
import { presentChangeRequest } from "./present-change-request.js";

type Context = RouteContext<Services>;

const write = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("write", BODY_LIMITS.admin, handle);

function liveFeatureKey(context: Context, environment: EnvironmentRecord): string {
  const featureKey = parseOrThrow(v.safeParse, FeatureKey, context.params.key, "INVALID_REQUEST");
  if (!context.services.features.getFeature(environment.appId, featureKey)) throw new ServiceError("NOT_FOUND", `No feature ${featureKey}.`);
  return featureKey;
}

/** The environment promoted to: another one of the same app, else a 400 at `to`. */
function targetOrThrow(context: Context, from: EnvironmentRecord, to: string): EnvironmentRecord {
  const target = context.services.tenancy.getEnvironment(to);
  const problem =
    !target || target.appId !== from.appId ? `must be an environment of app ${from.appId} (no environment ${to} there)` : target.id === from.id ? "must differ from the environment promoted from" : undefined;
  if (problem) throw new ServiceError("INVALID_BODY", undefined, [{ path: "to", message: problem }]);
  return target!;
}

/** The parts of the feature that differ between the two environments, as a change request's change (or none). */
function promotedChange(context: Context, from: EnvironmentRecord, to: EnvironmentRecord, featureKey: string): ProposedChange | undefined {
  const source = context.services.features.rulesOf(from.id, featureKey);
  const target = context.services.features.rulesOf(to.id, featureKey);
  const rules = source.targeting.segmentRules ?? source.targeting.rules;
  const targeting = JSON.stringify(rules) !== JSON.stringify(target.targeting.segmentRules ?? target.targeting.rules);
  const config = JSON.stringify(source.config.variants) !== JSON.stringify(target.config.variants);
  if (!targeting && !config) return undefined;
  return {
    feature: featureKey,
    ...(targeting ? { targeting: { rules } } : {}),
    ...(config ? { config: { variants: source.config.variants } } : {}),
  };
}

async function promote(context: Context) {
  const from = environmentOrNotFound(context);
  const featureKey = liveFeatureKey(context, from);
  const body = schemaBody(context.request, PromoteBody);
  const to = targetOrThrow(context, from, body.to);
  const answer = { key: featureKey, from: from.id, to: to.id };
  try {
    const result = await submitChange(context, "feature.promote", { fromEnvironmentId: from.id, toEnvironmentId: to.id, featureKey });
    const { targetingVersion, configVersion, flagStateVersion, wrote } = result;
    return ok({ ...answer, outcome: result.changed ? "written" : "unchanged", wrote, targetingVersion, configVersion, flagStateVersion });
  } catch (error) {
    // The target's policy holds a direct write: the same copy is proposed as a change request there instead.
    if (!(error instanceof ServiceError) || error.code !== "APPROVAL_REQUIRED") throw error;
  }
  const change = promotedChange(context, from, to, featureKey);
  if (!change) {
    const target = context.services.features.rulesOf(to.id, featureKey);
    return ok({ ...answer, outcome: "unchanged", wrote: [], targetingVersion: target.targeting.version, configVersion: target.config.version, flagStateVersion: to.flagStateVersion });
  }
  const source = context.services.features.rulesOf(from.id, featureKey);
  // A bypass refused above does not follow the request: approving it is the reviewers' decision now.
  const { bypass: _refused, ...envelope } = envelopeFor(context);
  const { changeRequest } = await submitChange(
    context,
    "change-request.create",
    {
      environmentId: to.id,
      requestId: `cr_${randomBase62(16)}`,
      title: body.title ?? `Promote ${featureKey} from ${from.name} to ${to.name}`,
      description: `Copies ${featureKey}'s targeting (version ${source.targeting.version}) and config (version ${source.config.version}) from ${from.name}.`,
      changes: [change],
      scheduledAt: null,
    },
    envelope,
  );
  return ok({ ...answer, outcome: "change-request", changeRequest: presentChangeRequest(context.services, changeRequest) });
}

export const RELEASE_FLOW_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["POST", "/admin/environments/:envId/features/:key/promote", write(promote)],
  [
    "PUT",
    "/admin/environments/:envId/features/:key/prerequisites",
    write(async (context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = liveFeatureKey(context, environment);
      const { prerequisites } = schemaBody(context.request, PrerequisitesBody);
      const result = await submitChange(context, "feature.prerequisites", { environmentId: environment.id, featureKey, prerequisites });
      return ok({ key: featureKey, prerequisites: result.prerequisites, version: result.version, changed: result.changed, flagStateVersion: result.flagStateVersion });
    }),
  ],
];
