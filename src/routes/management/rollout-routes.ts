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
import { submitChange } from "../core/submit.js";
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

export const ROLLOUT_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "POST",
    BASE,
    write(async (context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = featureOrNotFound(context, environment);
      const settings: RolloutSettings = schemaBody(context.request, StartRolloutBody);
      const warnings = guardWarnings(context.services.store, environment.id, settings.guards);
      const rolloutId = `ro_${randomBase62(16)}`;
      const { rollout } = await submitChange(context, "rollout.start", { environmentId: environment.id, featureKey, rolloutId, settings });
      return ok({ rollout: presentRollout(rollout, new RolloutRepository(context.services.store)), warnings });
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
