/**
 * The `flags.import` change (API.md §13.2): a whole document applied as one change, inside the management apply
 * transaction — planned again against the store as it is now, then every write of the plan, one audit entry, and
 * each touched environment's newest flagStateVersion for the live streams. A plan that changes nothing writes nothing.
 */
import { historyLink, type ApplyContext } from "./apply-context.js";
import type { ChangeOf } from "./changes.js";
import { refused, type Applied } from "./outcome.js";
import { planImport } from "./operations/import-plan.js";

export function applyFlagsImport(context: ApplyContext, change: ChangeOf<"flags.import">): Applied<"flags.import"> {
  const app = context.tenancy.getApp(change.appId);
  if (!app) return refused("NOT_FOUND", `No app ${change.appId}.`);
  const plan = planImport(context, app, change.document, change.ids, change.at);
  if (!plan.ok) return { ok: false, error: { code: plan.code, message: plan.message, ...(plan.issues ? { validationErrors: plan.issues } : {}) } };
  if (!plan.changes) return { ok: true, value: { answer: plan.answer }, audit: null };

  const { writes } = plan;
  const versions = new Map<string, number>();
  for (const segment of writes.segments) context.segments.putSegment(app.id, segment);
  for (const stage of writes.stages) context.stages.putStage(app.id, stage);
  for (const feature of writes.features) {
    const written = context.features.writeFeature(app.id, feature.key, feature.fields, feature.id, change.at, change.actor)!;
    for (const [environmentId, version] of written.flagStates) versions.set(environmentId, version);
    // writeFeature takes a feature out of its release stage when its label changes; naming a stage puts it back in.
    if (feature.stage) context.features.writeStage(app.id, feature.key, feature.stage.stageId, feature.stage.label, change.at, change.actor);
  }
  const link = historyLink(context, change);
  for (const rules of writes.rules) {
    const written = context.features.writeRules(rules.environmentId, rules.key, rules.kind, rules.list, change.at, link, rules.segmentRules)!;
    versions.set(rules.environmentId, written.flagStateVersion);
  }
  for (const { environmentId, key, prerequisites } of writes.prerequisites) {
    const written = context.features.writePrerequisites(environmentId, key, prerequisites, change.at, link)!;
    versions.set(environmentId, written.flagStateVersion);
  }
  const { summary } = plan.answer;
  return {
    ok: true,
    value: { answer: plan.answer },
    audit: {
      action: "flags.import",
      entity: { kind: "app", id: app.id, appId: app.id },
      details: { source: change.source, ...(change.url !== undefined ? { url: change.url } : {}), summary, segments: plan.answer.segments, stages: plan.answer.stages },
    },
    effects: { flagStates: [...versions.entries()] },
  };
}

