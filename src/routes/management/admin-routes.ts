import * as v from "valibot";
import { environmentOrNotFound } from "../core/route-lookups.js";
import { parseJsonBody } from "../../schemas/json-body.js";
import { ok } from "../../http/responses.js";
import { schemaBody } from "../core/schema-body.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { ServiceError } from "../../errors/catalogue.js";
import { CreateAppBody, CreateEnvironmentBody, FeatureKey, PutFeatureBody, RotateKeyBody } from "../../schemas/admin.js";
import { parseOrThrow } from "../../schemas/issues.js";
import { parseListQuery } from "../../tracking/index.js";
import { validateConfig, validateTargeting } from "../../schemas/rules.js";
import type { Services } from "../core/services.js";
import { digestKey, maskKey, newFeatureId, newKey } from "../../tenancy/identifiers.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { planApp, planEnvironment } from "../../tenancy/tenancy-repository.js";
import { segmentRefs } from "../../management/segments/inline.js";
import { SegmentRepository } from "../../management/segments/segment-repository.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import { StageRepository } from "../../features/stage-repository.js";
import { presentApp, presentFeature } from "./present.js";
import { isSwitchedOn, prerequisitesOf } from "../../features/feature-records.js";

type Context = RouteContext<Services>;

function body<TSchema extends v.GenericSchema>(context: Context, schema: TSchema): v.InferOutput<TSchema> {
  return schemaBody(context.request, schema);
}

/** A 400 naming each segment the rules name that the app does not have (apply checks again, for races). */
function checkSegmentsExist(context: Context, appId: string, input: unknown): void {
  const segments = new SegmentRepository(context.services.store);
  const missing = [...segmentRefs(input)].filter((id) => !segments.getSegment(appId, id));
  if (missing.length > 0) throw new ServiceError("INVALID_RULES", undefined, missing.map((id) => ({ path: "rules", message: `No segment ${id} in app ${appId}` })));
}

function featureKeyParam(context: Context): string {
  return parseOrThrow(v.safeParse, FeatureKey, context.params.key, "INVALID_REQUEST");
}

async function putRules(context: Context, kind: "targeting" | "config") {
  const environment = environmentOrNotFound(context);
  const featureKey = featureKeyParam(context);
  const input = parseJsonBody(context.request.body, context.request.headers["content-type"]);
  // Targeting may name segments of the app ({type: "segment", segmentId}); they are inlined when the change applies.
  const validated = kind === "targeting" ? validateTargeting(input, { segments: true }) : validateConfig(input);
  if (!validated.ok) throw new ServiceError("INVALID_RULES", undefined, validated.issues);
  if (kind === "targeting") checkSegmentsExist(context, environment.appId, input);
  // Stored exactly as saved: the validated input, not a normalised copy (targeting naming segments is also kept
  // inlined, as what is served).
  const list = kind === "targeting" ? (input as { rules: unknown[] }).rules : (input as { variants: unknown[] }).variants;
  const saved = await submitChange(context, "rules.put", { environmentId: environment.id, featureKey, kind, list });
  return kind === "targeting"
    ? ok({ targeting: saved.state.targeting, flagStateVersion: saved.flagStateVersion })
    : ok({ config: saved.state.config, flagStateVersion: saved.flagStateVersion });
}

const read = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("read", BODY_LIMITS.none, handle);
const write = (bodyLimit: number, handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("write", bodyLimit, handle);

/**
 * A feature's `stage` given by name (API.md §6, §10) is the app's release stage of that name, case-insensitive (or
 * its id): the feature is put in it (its targeting is left as it is; PUT .../stage also applies the stage's). A name
 * that is no release stage is a 400 listing the stages. Nothing when the body names no stage.
 */
function releaseStageOf(context: Context, stage: string | null | undefined): { stage?: string | null; stageId?: string | null } {
  if (typeof stage !== "string") return {};
  const wanted = stage.trim();
  if (wanted === "") return { stage: null, stageId: null };
  const stages = new StageRepository(context.services.store).listStages(context.params.appId!);
  if (!stages) return {};
  const found = stages.find((each) => each.id === wanted) ?? stages.find((each) => each.name.toLowerCase() === wanted.toLowerCase());
  if (!found) {
    const names = [...stages].sort((a, b) => a.order - b.order).map((each) => each.name);
    throw new ServiceError("INVALID_BODY", undefined, [{ path: "stage", message: `No release stage "${wanted}" in this app; its stages are: ${names.join(", ")}` }]);
  }
  return { stage: found.name, stageId: found.id };
}

/** The management API of API.md §6 (apps, environments, keys, features, rules, history). Every write is a change (src/management). */
export const ADMIN_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "POST",
    "/admin/apps",
    write(BODY_LIMITS.admin, async (context) => {
      const { name } = body(context, CreateAppBody);
      const envelope = envelopeFor(context);
      // A region's node pins what it creates to its region (data residency, docs/CLUSTER.md).
      const planned = planApp(name, envelope.at, context.services.config.cluster?.region);
      const environments = planned.environments.map((environment) => environment.record);
      const { app } = await submitChange(context, "app.create", { app: planned.app, trackingKeyDigest: planned.trackingKeyDigest, environments }, envelope);
      // Keys in clear only in this answer: the change and the store hold their digests.
      return ok({
        app: {
          id: app.id,
          name: app.name,
          ...(app.region !== undefined ? { region: app.region } : {}),
          trackingKey: planned.trackingKey,
          defaultEnvironmentId: app.defaultEnvironmentId,
          environments: planned.environments.map((environment) => environment.issued),
        },
      });
    }),
  ],
  [
    "GET",
    "/admin/apps",
    read((context) => {
      const { tenancy } = context.services;
      const apps = tenancy.listApps().map((app) => presentApp(app, environmentsOf(context, app.environmentIds)));
      return ok({ apps });
    }),
  ],
  [
    "GET",
    "/admin/apps/:appId",
    read((context) => {
      const app = context.services.tenancy.getApp(context.params.appId!);
      if (!app) throw new ServiceError("NOT_FOUND", `No app ${context.params.appId}.`);
      return ok({ app: presentApp(app, environmentsOf(context, app.environmentIds)) });
    }),
  ],
  [
    "POST",
    "/admin/apps/:appId/environments",
    write(BODY_LIMITS.admin, async (context) => {
      const { name } = body(context, CreateEnvironmentBody);
      const envelope = envelopeFor(context);
      const planned = planEnvironment(context.params.appId!, name, envelope.at);
      await submitChange(context, "environment.create", { environment: planned.record }, envelope);
      return ok({ environment: planned.issued });
    }),
  ],
  [
    "POST",
    "/admin/environments/:envId/keys/rotate",
    write(BODY_LIMITS.admin, async (context) => {
      const { kind } = body(context, RotateKeyBody);
      const environment = context.services.tenancy.getEnvironment(context.params.envId!);
      if (!environment) throw new ServiceError("NOT_FOUND", `No environment ${context.params.envId}.`);
      const fresh = newKey(kind, environment.name);
      // A publishable key is public (API.md §1): kept in full; a secret key only as its mask.
      await submitChange(context, "key.rotate", { environmentId: environment.id, kind, digest: digestKey(fresh), hint: kind === "publishable" ? fresh : maskKey(fresh) });
      return ok({ key: fresh });
    }),
  ],
  [
    "GET",
    "/admin/apps/:appId/features",
    read((context) => {
      if (!context.services.tenancy.getApp(context.params.appId!)) throw new ServiceError("NOT_FOUND", `No app ${context.params.appId}.`);
      return ok({ features: context.services.features.listFeatures(context.params.appId!).map(presentFeature) });
    }),
  ],
  [
    "PUT",
    "/admin/apps/:appId/features/:key",
    write(BODY_LIMITS.admin, async (context) => {
      const featureKey = featureKeyParam(context);
      const given = body(context, PutFeatureBody);
      const fields = { ...given, ...releaseStageOf(context, given.stage) };
      const { feature } = await submitChange(context, "feature.put", { appId: context.params.appId!, featureKey, featureId: newFeatureId(), fields });
      return ok({ feature: presentFeature(feature) });
    }),
  ],
  [
    "DELETE",
    "/admin/apps/:appId/features/:key",
    write(BODY_LIMITS.none, async (context) => {
      const featureKey = featureKeyParam(context);
      await submitChange(context, "feature.archive", { appId: context.params.appId!, featureKey });
      return ok();
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/features/:key",
    read((context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = featureKeyParam(context);
      const found = context.services.features
        .listEnvironmentFeatures(environment)
        .find((entry) => entry.feature.key === featureKey);
      if (!found) throw new ServiceError("NOT_FOUND", `No feature ${featureKey}.`);
      const enabled = isSwitchedOn(found.state);
      const prerequisites = prerequisitesOf(found.state);
      return ok({ feature: presentFeature(found.feature), targeting: found.state.targeting, config: found.state.config, enabled, prerequisites, flagStateVersion: environment.flagStateVersion });
    }),
  ],
  ["PUT", "/admin/environments/:envId/features/:key/targeting", write(BODY_LIMITS.admin, (context) => putRules(context, "targeting"))],
  ["PUT", "/admin/environments/:envId/features/:key/config", write(BODY_LIMITS.admin, (context) => putRules(context, "config"))],
  [
    "GET",
    "/admin/environments/:envId/features/:key/history",
    read((context) => {
      const environment = environmentOrNotFound(context);
      const featureKey = featureKeyParam(context);
      if (!context.services.features.getFeature(environment.appId, featureKey)) throw new ServiceError("NOT_FOUND", `No feature ${featureKey}.`);
      return ok({ versions: context.services.features.listHistory(environment.id, featureKey) });
    }),
  ],
];

/** A cursor-paged list of one append log (API.md §6), in append order. */
function pageRoute(list: (context: Context, environmentId: string, after: string | undefined, limit: number) => Record<string, unknown>): RouteSpec<Services> {
  return read((context) => {
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
    read((context) => {
      const environment = environmentOrNotFound(context);
      const user = context.services.tracking.getUser(environment.id, context.params.userId!);
      if (!user) throw new ServiceError("NOT_FOUND", `No user ${context.params.userId}.`);
      return ok({ user });
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/companies/:companyId",
    read((context) => {
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
  // The /user and /company calls as received, for the dashboard's live tail (docs/API.md §9).
  ["GET", "/admin/environments/:envId/entity-updates", pageRoute((context, id, after, limit) => context.services.tracking.listEntityUpdates(id, after, limit))],
];

function environmentsOf(context: Context, environmentIds: string[]): EnvironmentRecord[] {
  return environmentIds.flatMap((id) => context.services.tenancy.getEnvironment(id) ?? []);
}
