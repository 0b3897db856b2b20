/** Release stages per app and putting a feature in one (API.md §10); every write is a change (src/management). */
import { appOrNotFound } from "../core/route-lookups.js";
import { ok } from "../../http/responses.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import { ServiceError, type ValidationIssue } from "../../errors/catalogue.js";
import type { StagedFeature } from "../../management/changes.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import { CreateStageBody, SetFeatureStageBody, UpdateStageBody } from "../../schemas/stages.js";
import { validateTargeting } from "../../schemas/rules.js";
import type { Services } from "../core/services.js";
import { randomBase62 } from "../../tenancy/identifiers.js";
import type { AppRecord } from "../../tenancy/tenancy-records.js";
import type { StageRecord } from "../../features/stage-records.js";
import { StageRepository } from "../../features/stage-repository.js";
import { segmentRefs } from "../../management/segments/inline.js";
import { SegmentRepository } from "../../management/segments/segment-repository.js";
import type { KvStore } from "../../storage/kv.js";

type Context = RouteContext<Services>;


function stageOrNotFound(context: Context, app: AppRecord, idOrName: string): StageRecord {
  const stage = new StageRepository(context.services.store).findStage(app.id, idOrName);
  if (!stage) throw new ServiceError("NOT_FOUND", `No stage ${idOrName} in app ${app.id}.`);
  return stage;
}

/** Each environment's rules validated as §6 targeting; only `{rules}` is kept. Unknown environments: 400. */
function checkedTargeting(store: KvStore, app: AppRecord, targeting: Record<string, unknown> | undefined): StageRecord["targeting"] | undefined {
  if (targeting === undefined) return undefined;
  const issues: ValidationIssue[] = [];
  const out: StageRecord["targeting"] = {};
  for (const [environmentId, value] of Object.entries(targeting)) {
    if (!app.environmentIds.includes(environmentId)) {
      issues.push({ path: `targeting.${environmentId}`, message: `No environment ${environmentId} in app ${app.id}` });
      continue;
    }
    const validated = validateTargeting(value, { segments: true });
    if (!validated.ok) for (const issue of validated.issues) issues.push({ ...issue, path: `targeting.${environmentId}${issue.path ? `.${issue.path}` : ""}` });
    else {
      const segments = new SegmentRepository(store);
      for (const id of segmentRefs(value)) if (!segments.getSegment(app.id, id)) issues.push({ path: `targeting.${environmentId}.rules`, message: `No segment ${id} in app ${app.id}` });
      out[environmentId] = { rules: (value as { rules: unknown[] }).rules };
    }
  }
  if (issues.length > 0) throw new ServiceError("INVALID_RULES", undefined, issues);
  return out;
}

export function presentStage(stage: StageRecord, featureKeys: string[]) {
  return { id: stage.id, name: stage.name, order: stage.order, targeting: stage.targeting, features: featureKeys, createdAt: stage.createdAt };
}

function presentStaged(staged: StagedFeature) {
  return { key: staged.feature.key, stage: staged.feature.stage, stageId: staged.feature.stageId ?? null, environments: staged.environments };
}

function featureKeysIn(context: Context, appId: string, stageId: string): string[] {
  return context.services.features.listFeatures(appId).filter((feature) => feature.stageId === stageId).map((feature) => feature.key);
}

const read = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("read", BODY_LIMITS.none, handle);
const write = (bodyLimit: number, handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("write", bodyLimit, handle);

export const STAGE_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/apps/:appId/stages",
    read((context) => {
      const app = appOrNotFound(context);
      const stages = new StageRepository(context.services.store).listStages(app.id)!;
      return ok({ stages: stages.map((stage) => presentStage(stage, featureKeysIn(context, app.id, stage.id))) });
    }),
  ],
  [
    "POST",
    "/admin/apps/:appId/stages",
    write(BODY_LIMITS.admin, async (context) => {
      const app = appOrNotFound(context);
      const body = schemaBody(context.request, CreateStageBody);
      const targeting = checkedTargeting(context.services.store, app, body.targeting) ?? {};
      const existing = new StageRepository(context.services.store).listStages(app.id)!;
      const order = body.order ?? Math.max(0, ...existing.map((stage) => stage.order)) + 1;
      const envelope = envelopeFor(context);
      const stage: StageRecord = { id: `st_${randomBase62(10)}`, name: body.name, order, targeting, createdAt: envelope.at };
      const { stage: created } = await submitChange(context, "stage.create", { appId: app.id, stage }, envelope);
      return ok({ stage: presentStage(created, []) });
    }),
  ],
  [
    "PATCH",
    "/admin/apps/:appId/stages/:stageId",
    write(BODY_LIMITS.admin, async (context) => {
      const app = appOrNotFound(context);
      const body = schemaBody(context.request, UpdateStageBody);
      const before = stageOrNotFound(context, app, context.params.stageId!);
      const targeting = checkedTargeting(context.services.store, app, body.targeting);
      const fields = { ...(body.name !== undefined ? { name: body.name } : {}), ...(body.order !== undefined ? { order: body.order } : {}), ...(targeting ? { targeting } : {}) };
      const { stage, reapplied } = await submitChange(context, "stage.update", { appId: app.id, stageId: before.id, fields, reapply: body.reapply === true });
      return ok({ stage: presentStage(stage, featureKeysIn(context, app.id, stage.id)), reapplied: reapplied.map(presentStaged) });
    }),
  ],
  [
    "DELETE",
    "/admin/apps/:appId/stages/:stageId",
    write(BODY_LIMITS.none, async (context) => {
      const app = appOrNotFound(context);
      const stage = stageOrNotFound(context, app, context.params.stageId!);
      await submitChange(context, "stage.delete", { appId: app.id, stageId: stage.id });
      return ok();
    }),
  ],
  [
    "PUT",
    "/admin/apps/:appId/features/:key/stage",
    write(BODY_LIMITS.admin, async (context) => {
      const app = appOrNotFound(context);
      const body = schemaBody(context.request, SetFeatureStageBody);
      const stage = stageOrNotFound(context, app, body.stage);
      const staged = await submitChange(context, "feature.stage", { appId: app.id, featureKey: context.params.key!, stageId: stage.id });
      return ok({ feature: presentStaged(staged) });
    }),
  ],
];
