/** Appliers for release stages (API.md §10): stages per app, and putting a feature in one. */
import type { FeatureRecord, HistoryLink } from "../features/feature-records.js";
import type { StageRecord } from "../features/stage-records.js";
import type { AppRecord } from "../tenancy/tenancy-records.js";
import { historyLink, type ApplyContext, type Appliers } from "./apply-context.js";
import type { StagedFeature } from "./changes.js";
import { refused } from "./outcome.js";
import { segmentRefs } from "./segments/inline.js";
import { saveTargeting, segmentLookup } from "./targeting-writes.js";
import { prepareTargeting, type PreparedTargeting } from "./segments/inline.js";

type StageAppliers = Pick<Appliers, "stage.create" | "stage.update" | "stage.delete" | "feature.stage">;

/** Environments a stage's targeting names that the app does not have: a refusal, never a silent drop. */
function foreignEnvironments(app: AppRecord, targeting: StageRecord["targeting"] | undefined): string[] {
  return Object.keys(targeting ?? {}).filter((id) => !app.environmentIds.includes(id));
}

type PreparedStage = Map<string, Extract<PreparedTargeting, { ok: true }>>;

/** A stage's rules per environment of the app, segments inlined — before any write, so a refusal writes nothing. */
function prepareStage(context: ApplyContext, app: AppRecord, stage: StageRecord): PreparedStage | string {
  const prepared: PreparedStage = new Map();
  for (const environmentId of app.environmentIds) {
    const rules = prepareTargeting(stage.targeting[environmentId]?.rules ?? [], segmentLookup(context, app.id));
    if (!rules.ok) return `Stage ${stage.name}, environment ${environmentId}: ${rules.message}`;
    prepared.set(environmentId, rules);
  }
  return prepared;
}

/**
 * Writes a stage's targeting to one feature in every environment of the app: one new version each, which bumps
 * each environment's flagStateVersion once. `versions` collects the newest flagStateVersion per environment.
 */
function writeStageTargeting(
  context: ApplyContext,
  app: AppRecord,
  feature: FeatureRecord,
  prepared: PreparedStage,
  at: string,
  link: HistoryLink,
  versions: Map<string, number>,
): StagedFeature {
  const environments = app.environmentIds.map((environmentId) => {
    const written = saveTargeting(context, environmentId, feature.key, prepared.get(environmentId)!, at, link);
    versions.set(environmentId, written.flagStateVersion);
    return { environmentId, ...written };
  });
  return { feature: context.features.getFeature(app.id, feature.key)!, environments };
}

/** The first segment a stage's targeting names that the app does not have. */
function missingSegment(context: ApplyContext, appId: string, targeting: StageRecord["targeting"] | undefined): string | undefined {
  return [...segmentRefs(targeting ?? {})].find((id) => !context.segments.getSegment(appId, id));
}

function stageEntity(appId: string, stage: StageRecord) {
  return { kind: "stage", id: stage.id, key: stage.name, appId };
}

export const STAGE_APPLIERS: StageAppliers = {
  "stage.create"(context, change) {
    const { tenancy, stages } = context;
    const app = tenancy.getApp(change.appId);
    if (!app) return refused("NOT_FOUND", `No app ${change.appId}.`);
    const existing = stages.listStages(app.id)!;
    if (existing.some((stage) => stage.id === change.stage.id || stage.name === change.stage.name)) return refused("CONFLICT", `A stage named ${change.stage.name} exists.`);
    const foreign = foreignEnvironments(app, change.stage.targeting);
    if (foreign.length > 0) return refused("NOT_FOUND", `No environment ${foreign[0]} in app ${app.id}.`);
    const missing = missingSegment(context, app.id, change.stage.targeting);
    if (missing) return refused("INVALID_RULES", `No segment ${missing} in app ${app.id}.`);
    stages.putStage(app.id, change.stage);
    return {
      ok: true,
      value: { stage: change.stage },
      audit: { action: "stage.create", entity: stageEntity(app.id, change.stage), details: { name: change.stage.name, order: change.stage.order, targeting: change.stage.targeting } },
    };
  },

  "stage.update"(context, change) {
    const { tenancy, stages, features } = context;
    const app = tenancy.getApp(change.appId);
    const before = app && stages.getStage(app.id, change.stageId);
    if (!app || !before) return refused("NOT_FOUND", `No stage ${change.stageId} in app ${change.appId}.`);
    const { name, order, targeting } = change.fields;
    if (name !== undefined && name !== before.name && stages.listStages(app.id)!.some((stage) => stage.name === name)) return refused("CONFLICT", `A stage named ${name} exists.`);
    const foreign = foreignEnvironments(app, targeting);
    if (foreign.length > 0) return refused("NOT_FOUND", `No environment ${foreign[0]} in app ${app.id}.`);
    const missing = missingSegment(context, app.id, targeting);
    if (missing) return refused("INVALID_RULES", `No segment ${missing} in app ${app.id}.`);
    const stage: StageRecord = { ...before, ...(name !== undefined ? { name } : {}), ...(order !== undefined ? { order } : {}), ...(targeting !== undefined ? { targeting } : {}) };
    const inStage = features.listFeatures(app.id).filter((feature) => feature.stageId === stage.id);
    const prepared = change.reapply && inStage.length > 0 ? prepareStage(context, app, stage) : new Map() as PreparedStage;
    if (typeof prepared === "string") return refused("INVALID_RULES", prepared);
    stages.putStage(app.id, stage);
    const versions = new Map<string, number>();
    if (stage.name !== before.name && inStage.length > 0) {
      // The features keep their stage under its new name; their answers carry the name, so every environment moves.
      for (const feature of inStage) features.writeStage(app.id, feature.key, stage.id, stage.name, change.at, change.actor);
      for (const [environmentId, version] of tenancy.bumpFlagStateVersions(app.environmentIds)) versions.set(environmentId, version);
    }
    const link = historyLink(context, change);
    const reapplied = change.reapply ? inStage.map((feature) => writeStageTargeting(context, app, feature, prepared, change.at, link, versions)) : [];
    const diff: Record<string, { from: unknown; to: unknown }> = {};
    for (const field of ["name", "order", "targeting"] as const) {
      if (JSON.stringify(before[field]) !== JSON.stringify(stage[field])) diff[field] = { from: before[field], to: stage[field] };
    }
    return {
      ok: true,
      value: { stage, reapplied },
      audit: {
        action: "stage.update",
        entity: stageEntity(app.id, stage),
        details: { changes: diff, reapplied: reapplied.map((staged) => ({ key: staged.feature.key, environments: staged.environments })) },
      },
      effects: { flagStates: [...versions.entries()] },
    };
  },

  "stage.delete"({ tenancy, stages, features }, change) {
    const app = tenancy.getApp(change.appId);
    const stage = app && stages.getStage(app.id, change.stageId);
    if (!app || !stage) return refused("NOT_FOUND", `No stage ${change.stageId} in app ${change.appId}.`);
    const inStage = features.listFeatures(app.id).filter((feature) => feature.stageId === stage.id);
    if (inStage.length > 0) return refused("CONFLICT", `Stage ${stage.name} holds ${inStage.length} feature(s): move them first.`);
    stages.removeStage(app.id, stage.id);
    return { ok: true, value: { stage }, audit: { action: "stage.delete", entity: stageEntity(app.id, stage), details: { name: stage.name } } };
  },

  "feature.stage"(context, change) {
    const { tenancy, stages, features } = context;
    const app = tenancy.getApp(change.appId);
    if (!app) return refused("NOT_FOUND", `No app ${change.appId}.`);
    const stage = stages.getStage(app.id, change.stageId);
    if (!stage) return refused("NOT_FOUND", `No stage ${change.stageId} in app ${app.id}.`);
    if (!features.getFeature(app.id, change.featureKey)) return refused("NOT_FOUND", `No feature ${change.featureKey} in app ${app.id}.`);
    const prepared = prepareStage(context, app, stage);
    if (typeof prepared === "string") return refused("INVALID_RULES", prepared);
    const staged = features.writeStage(app.id, change.featureKey, stage.id, stage.name, change.at, change.actor)!;
    const versions = new Map<string, number>();
    const link = historyLink(context, change);
    const result = writeStageTargeting(context, app, staged.feature, prepared, change.at, link, versions);
    return {
      ok: true,
      value: result,
      audit: {
        action: "feature.stage",
        entity: { kind: "feature", id: staged.feature.id, key: staged.feature.key, appId: app.id },
        details: { stage: { from: staged.previous.stage, to: stage.name }, stageId: stage.id, environments: result.environments },
      },
      effects: { flagStates: [...versions.entries()] },
    };
  },
};
