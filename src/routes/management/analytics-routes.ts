import * as v from "valibot";
import { environmentOrNotFound } from "../core/route-lookups.js";
import { ok } from "../../http/responses.js";
import { schemaBody } from "../core/schema-body.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { ServiceError } from "../../errors/catalogue.js";
import type { FeatureRecord } from "../../features/feature-records.js";
import { FeatureKey } from "../../schemas/admin.js";
import { parseOrThrow } from "../../schemas/issues.js";
import type { Services } from "../core/services.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { checkListLimit, DEFAULT_LIST_LIMIT } from "../../storage/cursor.js";
import { AnalyticsQueries } from "../../analytics/queries.js";
import { submitChange } from "../core/submit.js";
import { getAnalyticsSettings, PutAnalyticsSettingsBody } from "../../analytics/settings.js";
import { resolveWindow, type AnalyticsWindow } from "../../analytics/window.js";

type Context = RouteContext<Services>;

const read = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("read", BODY_LIMITS.none, handle);
const write = (bodyLimit: number, handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("write", bodyLimit, handle);


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
    read((context) => {
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
    read((context) => {
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
    read((context) => {
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
    read((context) => {
      const environment = environmentOrNotFound(context);
      return ok({ settings: getAnalyticsSettings(context.services.store, environment.id) });
    }),
  ],
  [
    "PUT",
    "/admin/environments/:envId/analytics/settings",
    write(BODY_LIMITS.admin, async (context) => {
      const environment = environmentOrNotFound(context);
      const settings = schemaBody(context.request, PutAnalyticsSettingsBody);
      return ok(await submitChange(context, "analytics.settings", { environmentId: environment.id, settings }));
    }),
  ],
  [
    "POST",
    "/admin/environments/:envId/analytics/rebuild",
    write(BODY_LIMITS.none, async (context) => {
      const environment = environmentOrNotFound(context);
      const { report } = await submitChange(context, "analytics.rebuild", { environmentId: environment.id });
      return ok({ rebuilt: report });
    }),
  ],
];
