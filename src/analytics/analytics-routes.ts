import * as v from "valibot";
import { parseJsonBody } from "../api/json-body.js";
import { ok } from "../api/responses.js";
import { BODY_LIMITS, type RouteContext, type RouteSpec } from "../api/route.js";
import type { HttpMethod } from "../api/router.js";
import { ServiceError } from "../errors/catalogue.js";
import type { FeatureRecord } from "../features/records.js";
import { FeatureKey } from "../schemas/admin.js";
import { parseOrThrow } from "../schemas/issues.js";
import type { Services } from "../services.js";
import type { EnvironmentRecord } from "../tenancy/records.js";
import { checkListLimit, DEFAULT_LIST_LIMIT } from "../tracking/cursor.js";
import { AnalyticsQueries } from "./queries.js";
import { rebuildAggregates } from "./rebuild.js";
import { getAnalyticsSettings, putAnalyticsSettings, PutAnalyticsSettingsBody } from "./settings.js";
import { resolveWindow, type AnalyticsWindow } from "./window.js";

type Context = RouteContext<Services>;

const admin = (bodyLimit: number, handle: RouteSpec<Services>["handle"]): RouteSpec<Services> => ({ access: "admin", bodyLimit, cors: false, handle });

function environmentOrNotFound(context: Context): EnvironmentRecord {
  // Worker threads commit tracking data; renew this thread's read snapshot so the answer includes it.
  context.services.store.refresh();
  const environment = context.services.tenancy.getEnvironment(context.params.envId!);
  if (!environment) throw new ServiceError("NOT_FOUND", `No environment ${context.params.envId}.`);
  return environment;
}

function liveFeature(context: Context, environment: EnvironmentRecord): FeatureRecord {
  const featureKey = parseOrThrow(v.safeParse, FeatureKey, context.params.key, "INVALID_REQUEST");
  const feature = context.services.features.getFeature(environment.appId, featureKey);
  if (!feature) throw new ServiceError("NOT_FOUND", `No feature ${featureKey}.`);
  return feature;
}

function query(context: Context): URLSearchParams {
  return new URLSearchParams(context.request.query);
}

function windowOf(params: URLSearchParams): AnalyticsWindow {
  return resolveWindow(params.get("from"), params.get("to"), Date.now());
}

function windowFields(window: AnalyticsWindow): { from: string; to: string } {
  return { from: new Date(window.from).toISOString(), to: new Date(window.to).toISOString() };
}

function limitOf(params: URLSearchParams): number {
  const limit = params.get("limit");
  if (limit === null || limit === "") return DEFAULT_LIST_LIMIT;
  return checkListLimit(/^[0-9]{1,10}$/.test(limit) ? Number(limit) : Number.NaN);
}

/** Company-level adoption, satisfaction and exposure (docs/ANALYTICS.md), and their upkeep. */
export const ANALYTICS_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/environments/:envId/analytics/features",
    admin(BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const window = windowOf(query(context));
      const { retentionDays } = getAnalyticsSettings(context.services.store, environment.id);
      const features = new AnalyticsQueries(context.services.store).featureSummaries(
        environment.id,
        context.services.features.listFeatures(environment.appId),
        window,
        retentionDays,
      );
      return ok({ ...windowFields(window), features });
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/analytics/features/:key/companies",
    admin(BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const feature = liveFeature(context, environment);
      const params = query(context);
      const window = windowOf(params);
      const limit = limitOf(params);
      const after = params.get("after") || undefined;
      const { retentionDays } = getAnalyticsSettings(context.services.store, environment.id);
      const page = new AnalyticsQueries(context.services.store).featureCompanies(environment.id, feature, window, retentionDays, after, limit);
      return ok({ ...windowFields(window), companies: page.companies, next: page.next });
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/analytics/companies/:companyId",
    admin(BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const companyId = context.params.companyId!;
      const window = windowOf(query(context));
      if (context.services.tracking.getCompanyAttributes(environment.id, companyId) === undefined) throw new ServiceError("NOT_FOUND", `No company ${companyId}.`);
      const { retentionDays } = getAnalyticsSettings(context.services.store, environment.id);
      const features = new AnalyticsQueries(context.services.store).companyFeatures(
        environment.id,
        companyId,
        context.services.features.listFeatures(environment.appId),
        window,
        retentionDays,
      );
      return ok({ ...windowFields(window), features });
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/analytics/settings",
    admin(BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      return ok({ settings: getAnalyticsSettings(context.services.store, environment.id) });
    }),
  ],
  [
    "PUT",
    "/admin/environments/:envId/analytics/settings",
    admin(BODY_LIMITS.admin, async (context) => {
      const environment = environmentOrNotFound(context);
      const input = parseJsonBody(context.request.body, context.request.headers["content-type"]);
      const settings = parseOrThrow(v.safeParse, PutAnalyticsSettingsBody, input);
      return ok({ settings: await putAnalyticsSettings(context.services.store, environment.id, settings) });
    }),
  ],
  [
    "POST",
    "/admin/environments/:envId/analytics/rebuild",
    admin(BODY_LIMITS.none, async (context) => {
      const environment = environmentOrNotFound(context);
      return ok({ rebuilt: await rebuildAggregates(context.services.store, environment.id) });
    }),
  ],
];
