import * as v from "valibot";
import { parseJsonBody } from "../api/json-body.js";
import { ok } from "../api/responses.js";
import { BODY_LIMITS, type RouteContext, type RouteSpec } from "../api/route.js";
import type { HttpMethod, Router } from "../api/router.js";
import { ServiceError } from "../errors/catalogue.js";
import { CreateAppBody, CreateEnvironmentBody, FeatureKey, PutFeatureBody, RotateKeyBody } from "../schemas/admin.js";
import { parseOrThrow } from "../schemas/issues.js";
import { parseListQuery } from "../tracking/index.js";
import { validateConfig, validateTargeting } from "../schemas/rules.js";
import type { Services } from "../services.js";
import type { EnvironmentRecord } from "../tenancy/records.js";
import { ANALYTICS_ROUTES } from "../analytics/analytics-routes.js";
import { presentApp, presentFeature } from "./present.js";

type Context = RouteContext<Services>;

function body<TSchema extends v.GenericSchema>(context: Context, schema: TSchema): v.InferOutput<TSchema> {
  const input = parseJsonBody(context.request.body, context.request.headers["content-type"]);
  return parseOrThrow(v.safeParse, schema, input);
}

function environmentOrNotFound(context: Context): EnvironmentRecord {
  // Worker threads commit tracking data; renew this thread's read snapshot so an admin read sees it at once.
  context.services.store.refresh();
  const environment = context.services.tenancy.getEnvironment(context.params.envId!);
  if (!environment) throw new ServiceError("NOT_FOUND", `No environment ${context.params.envId}.`);
  return environment;
}

function featureKeyParam(context: Context): string {
  return parseOrThrow(v.safeParse, FeatureKey, context.params.key, "INVALID_REQUEST");
}

/** Announces the new flagStateVersion of every environment of an app after an app-level feature change. */
function announceApp(context: Context, appId: string): void {
  const app = context.services.tenancy.getApp(appId);
  for (const environmentId of app?.environmentIds ?? []) {
    const environment = context.services.tenancy.getEnvironment(environmentId);
    if (environment) context.services.flagStates.announce(environmentId, environment.flagStateVersion);
  }
}

async function putRules(context: Context, kind: "targeting" | "config") {
  const environment = environmentOrNotFound(context);
  const featureKey = featureKeyParam(context);
  const input = parseJsonBody(context.request.body, context.request.headers["content-type"]);
  const validated = kind === "targeting" ? validateTargeting(input) : validateConfig(input);
  if (!validated.ok) throw new ServiceError("INVALID_RULES", undefined, validated.issues);
  // Stored exactly as saved: the validated input, not a normalised copy.
  const list = kind === "targeting" ? (input as { rules: unknown[] }).rules : (input as { variants: unknown[] }).variants;
  const saved = await context.services.features.putRules(environment.id, featureKey, kind, list);
  if (!saved) throw new ServiceError("NOT_FOUND", `No feature ${featureKey}.`);
  context.services.flagStates.announce(environment.id, saved.flagStateVersion);
  return kind === "targeting"
    ? ok({ targeting: saved.state.targeting, flagStateVersion: saved.flagStateVersion })
    : ok({ config: saved.state.config, flagStateVersion: saved.flagStateVersion });
}

const admin = (bodyLimit: number, handle: RouteSpec<Services>["handle"]): RouteSpec<Services> => ({ access: "admin", bodyLimit, cors: false, handle });

/** The management API of API.md §6 (apps, environments, keys, features, rules, history). */
export const ADMIN_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "POST",
    "/admin/apps",
    admin(BODY_LIMITS.admin, async (context) => {
      const { name } = body(context, CreateAppBody);
      const issued = await context.services.tenancy.createApp(name);
      context.services.keys.reload();
      return ok({
        app: {
          id: issued.app.id,
          name: issued.app.name,
          trackingKey: issued.trackingKey,
          defaultEnvironmentId: issued.app.defaultEnvironmentId,
          environments: issued.environments,
        },
      });
    }),
  ],
  [
    "GET",
    "/admin/apps",
    admin(BODY_LIMITS.none, (context) => {
      const { tenancy } = context.services;
      const apps = tenancy.listApps().map((app) => presentApp(app, environmentsOf(context, app.environmentIds)));
      return ok({ apps });
    }),
  ],
  [
    "GET",
    "/admin/apps/:appId",
    admin(BODY_LIMITS.none, (context) => {
      const app = context.services.tenancy.getApp(context.params.appId!);
      if (!app) throw new ServiceError("NOT_FOUND", `No app ${context.params.appId}.`);
      return ok({ app: presentApp(app, environmentsOf(context, app.environmentIds)) });
    }),
  ],
  [
    "POST",
    "/admin/apps/:appId/environments",
    admin(BODY_LIMITS.admin, async (context) => {
      const { name } = body(context, CreateEnvironmentBody);
      const environment = await context.services.tenancy.createEnvironment(context.params.appId!, name);
      if (!environment) throw new ServiceError("NOT_FOUND", `No app ${context.params.appId}.`);
      context.services.keys.reload();
      return ok({ environment });
    }),
  ],
  [
    "POST",
    "/admin/environments/:envId/keys/rotate",
    admin(BODY_LIMITS.admin, async (context) => {
      const { kind } = body(context, RotateKeyBody);
      const rotated = await context.services.tenancy.rotateKey(context.params.envId!, kind);
      if (!rotated) throw new ServiceError("NOT_FOUND", `No environment ${context.params.envId}.`);
      context.services.keys.forget(rotated.revokedDigest);
      context.services.keys.reload();
      return ok({ key: rotated.key });
    }),
  ],
  [
    "GET",
    "/admin/apps/:appId/features",
    admin(BODY_LIMITS.none, (context) => {
      if (!context.services.tenancy.getApp(context.params.appId!)) throw new ServiceError("NOT_FOUND", `No app ${context.params.appId}.`);
      return ok({ features: context.services.features.listFeatures(context.params.appId!).map(presentFeature) });
    }),
  ],
  [
    "PUT",
    "/admin/apps/:appId/features/:key",
    admin(BODY_LIMITS.admin, async (context) => {
      const featureKey = featureKeyParam(context);
      const changes = body(context, PutFeatureBody);
      const feature = await context.services.features.putFeature(context.params.appId!, featureKey, changes);
      if (!feature) throw new ServiceError("NOT_FOUND", `No app ${context.params.appId}.`);
      announceApp(context, context.params.appId!);
      return ok({ feature: presentFeature(feature) });
    }),
  ],
  [
    "DELETE",
    "/admin/apps/:appId/features/:key",
    admin(BODY_LIMITS.none, async (context) => {
      const featureKey = featureKeyParam(context);
      const archived = await context.services.features.archiveFeature(context.params.appId!, featureKey);
      if (!archived) throw new ServiceError("NOT_FOUND", `No feature ${featureKey} in app ${context.params.appId}.`);
      announceApp(context, context.params.appId!);
      return ok();
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/features/:key",
    admin(BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = featureKeyParam(context);
      const found = context.services.features
        .listEnvironmentFeatures(environment)
        .find((entry) => entry.feature.key === featureKey);
      if (!found) throw new ServiceError("NOT_FOUND", `No feature ${featureKey}.`);
      return ok({ feature: presentFeature(found.feature), targeting: found.state.targeting, config: found.state.config, flagStateVersion: environment.flagStateVersion });
    }),
  ],
  ["PUT", "/admin/environments/:envId/features/:key/targeting", admin(BODY_LIMITS.admin, (context) => putRules(context, "targeting"))],
  ["PUT", "/admin/environments/:envId/features/:key/config", admin(BODY_LIMITS.admin, (context) => putRules(context, "config"))],
  [
    "GET",
    "/admin/environments/:envId/features/:key/history",
    admin(BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = featureKeyParam(context);
      if (!context.services.features.getFeature(environment.appId, featureKey)) throw new ServiceError("NOT_FOUND", `No feature ${featureKey}.`);
      return ok({ versions: context.services.features.listHistory(environment.id, featureKey) });
    }),
  ],
];

/** A cursor-paged list of one append log (API.md §6), in append order. */
function pageRoute(list: (context: Context, environmentId: string, after: string | undefined, limit: number) => Record<string, unknown>): RouteSpec<Services> {
  return admin(BODY_LIMITS.none, (context) => {
    const environment = environmentOrNotFound(context);
    const query = new URLSearchParams(context.request.query);
    const { after, limit } = parseListQuery(query.get("after"), query.get("limit"));
    return ok(list(context, environment.id, after, limit));
  });
}

/** What was tracked: the read endpoints of API.md §6, also the export path. */
export const TRACKED_DATA_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/environments/:envId/users/:userId",
    admin(BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const user = context.services.tracking.getUser(environment.id, context.params.userId!);
      if (!user) throw new ServiceError("NOT_FOUND", `No user ${context.params.userId}.`);
      return ok({ user });
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/companies/:companyId",
    admin(BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const company = context.services.tracking.getCompany(environment.id, context.params.companyId!);
      if (!company) throw new ServiceError("NOT_FOUND", `No company ${context.params.companyId}.`);
      return ok({ company });
    }),
  ],
  ["GET", "/admin/environments/:envId/events", pageRoute((context, id, after, limit) => context.services.tracking.listEvents(id, after, limit))],
  ["GET", "/admin/environments/:envId/feature-events", pageRoute((context, id, after, limit) => context.services.tracking.listFeatureEvents(id, after, limit))],
  ["GET", "/admin/environments/:envId/feedback", pageRoute((context, id, after, limit) => context.services.tracking.listFeedback(id, after, limit))],
  ["GET", "/admin/environments/:envId/prompt-events", pageRoute((context, id, after, limit) => context.services.tracking.listPromptEvents(id, after, limit))],
];

function environmentsOf(context: Context, environmentIds: string[]): EnvironmentRecord[] {
  return environmentIds.flatMap((id) => context.services.tenancy.getEnvironment(id) ?? []);
}

export function addAdminRoutes(router: Router<RouteSpec<Services>>): void {
  for (const [method, pattern, spec] of [...ADMIN_ROUTES, ...TRACKED_DATA_ROUTES, ...ANALYTICS_ROUTES]) router.add(method, pattern, spec);
}
