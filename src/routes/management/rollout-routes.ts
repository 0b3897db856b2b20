/** Guarded rollouts (API.md §17) through the management API: start, read, list, pause, resume, cancel, roll back. */
import * as v from "valibot";
import { ok } from "../../http/responses.js";
import { ServiceError } from "../../errors/catalogue.js";
import { FeatureKey } from "../../schemas/admin.js";
import { parseOrThrow } from "../../schemas/issues.js";
import { RolloutActionBody, StartRolloutBody } from "../../schemas/rollouts.js";
import { parseJsonBody } from "../../schemas/json-body.js";
import { guardWarnings } from "../../management/rollouts/guard-warnings.js";
import { presentRollout } from "../../management/rollouts/present-rollout.js";
import { RolloutRepository } from "../../management/rollouts/rollout-repository.js";
import type { RolloutSettings } from "../../management/rollouts/rollout-records.js";
import { randomBase62 } from "../../tenancy/identifiers.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { environmentOrNotFound } from "../core/route-lookups.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import { PolicyRepository } from "../../management/governance/policy.js";
import { rolloutIdOf } from "../../management/governance/change-request-records.js";
import { presentChangeRequest } from "./present-change-request.js";
import type { Services } from "../core/services.js";

type Context = RouteContext<Services>;

const read = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("read", BODY_LIMITS.none, handle);
const write = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("write", BODY_LIMITS.admin, handle);

const BASE = "/admin/environments/:envId/features/:key/rollouts";

function featureOrNotFound(context: Context, environment: EnvironmentRecord): string {
  const featureKey = parseOrThrow(v.safeParse, FeatureKey, context.params.key, "INVALID_REQUEST");
  if (!context.services.features.getFeature(environment.appId, featureKey)) throw new ServiceError("NOT_FOUND", `No feature ${featureKey}.`);
  return featureKey;
}

function rolloutOrNotFound(context: Context, environment: EnvironmentRecord, featureKey: string) {
  const rollout = new RolloutRepository(context.services.store).get(environment.id, context.params.rolloutId!);
  if (!rollout || rollout.featureKey !== featureKey) throw new ServiceError("NOT_FOUND", `No rollout ${context.params.rolloutId} of feature ${featureKey}.`);
  return rollout;
}

/** An action's optional `reason`: the body may be empty. */
function reasonOf(context: Context): string | null {
  const body = context.request.body;
  if (body === null || body.length === 0) return null;
  const parsed = parseOrThrow(v.safeParse, RolloutActionBody, parseJsonBody(body, context.request.headers["content-type"]));
  return parsed.reason ?? null;
}

const action = (kind: "pause" | "resume" | "cancel" | "rollback") =>
  write(async (context) => {
    const environment = environmentOrNotFound(context);
    const featureKey = featureOrNotFound(context, environment);
    const rollout = rolloutOrNotFound(context, environment, featureKey);
    const reason = reasonOf(context);
    const result = await submitChange(context, "rollout.transition", { environmentId: environment.id, rolloutId: rollout.id, action: kind, expected: null, reason, evidence: null });
    return ok({ rollout: presentRollout(result.rollout, new RolloutRepository(context.services.store)) });
  });

/**
 * Starts a rollout, or where the environment requires approval proposes its start as a change request (API.md §15,
 * §17) — unless an owner says bypass with a reason. Shared with the MCP tool.
 */
export async function startOrPropose(context: Context, environment: EnvironmentRecord, featureKey: string, settings: RolloutSettings) {
  const store = context.services.store;
  const warnings = guardWarnings(store, environment.id, settings.guards);
  const envelope = envelopeFor(context);
  if (new PolicyRepository(store).policyOf(environment).requireApproval && !envelope.bypass) {
    // What applying would refuse, said now rather than after the reviews.
    const active = new RolloutRepository(store).activeId(environment.id, featureKey);
    if (active !== undefined) throw new ServiceError("CONFLICT", `Feature ${featureKey} already has an active rollout in this environment (${active}).`);
    if (context.services.features.rulesOf(environment.id, featureKey).targeting.rules.length === 0) {
      throw new ServiceError("CONFLICT", `Feature ${featureKey} has no targeting rules in this environment: a rollout raises the share of who the rules target, so set them first.`);
    }
    const proposal = {
      environmentId: environment.id,
      requestId: `cr_${randomBase62(16)}`,
      title: `Guarded rollout of ${featureKey}`,
      description: `Steps ${settings.steps.join(", ")} %, ${settings.stepSeconds} s each; guards: ${settings.guards.map((guard) => guard.event).join(", ") || "none"}. Starts when the request is applied.`,
      changes: [{ feature: featureKey, rollout: settings }],
      scheduledAt: null,
    };
    const { changeRequest } = await submitChange(context, "change-request.create", proposal, envelope);
    return { rollout: null, rolloutId: rolloutIdOf(changeRequest), changeRequest: presentChangeRequest(context.services, changeRequest), warnings };
  }
  const rolloutId = `ro_${randomBase62(16)}`;
  const { rollout } = await submitChange(context, "rollout.start", { environmentId: environment.id, featureKey, rolloutId, settings }, envelope);
  return { rollout: presentRollout(rollout, new RolloutRepository(store)), warnings };
}

export const ROLLOUT_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/environments/:envId/rollouts",
    read((context) => {
      const environment = environmentOrNotFound(context);
      const rollouts = new RolloutRepository(context.services.store);
      return ok({ rollouts: rollouts.listIn(environment.id).map((rollout) => presentRollout(rollout, rollouts)) });
    }),
  ],
  [
    "POST",
    BASE,
    write(async (context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = featureOrNotFound(context, environment);
      const settings: RolloutSettings = schemaBody(context.request, StartRolloutBody);
      return ok(await startOrPropose(context, environment, featureKey, settings));
    }),
  ],
  [
    "GET",
    BASE,
    read((context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = featureOrNotFound(context, environment);
      const rollouts = new RolloutRepository(context.services.store);
      return ok({ rollouts: rollouts.listForFeature(environment.id, featureKey).map((rollout) => presentRollout(rollout, rollouts)) });
    }),
  ],
  [
    "GET",
    `${BASE}/:rolloutId`,
    read((context) => {
      const environment = environmentOrNotFound(context);
      const rollout = rolloutOrNotFound(context, environment, featureOrNotFound(context, environment));
      return ok({ rollout: presentRollout(rollout, new RolloutRepository(context.services.store)) });
    }),
  ],
  ["POST", `${BASE}/:rolloutId/pause`, action("pause")],
  ["POST", `${BASE}/:rolloutId/resume`, action("resume")],
  ["POST", `${BASE}/:rolloutId/cancel`, action("cancel")],
  ["POST", `${BASE}/:rolloutId/rollback`, action("rollback")],
];
