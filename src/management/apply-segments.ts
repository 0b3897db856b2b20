/** Appliers for segments (API.md §10): named company filters that targeting rules reference and serve inlined. */
import { findCycle, segmentRefs } from "./segments/inline.js";
import { describeUsage, segmentUsage } from "./segments/segment-usage.js";
import type { SegmentRecord } from "./segments/segment-records.js";
import { saveTargeting, segmentLookup } from "./targeting-writes.js";
import { prepareTargeting, type PreparedTargeting } from "./segments/inline.js";
import type { AppRecord } from "../tenancy/tenancy-records.js";
import { historyLink, type ApplyContext, type Appliers } from "./apply-context.js";
import type { RetargetedFeature } from "./changes.js";
import { refused } from "./outcome.js";

type SegmentAppliers = Pick<Appliers, "segment.create" | "segment.update" | "segment.delete">;

function segmentEntity(appId: string, segment: SegmentRecord) {
  return { kind: "segment", id: segment.id, key: segment.name, appId };
}

/** Why `segment`'s filter cannot be stored: a segment it names is missing, or it would contain itself. */
function filterProblem(context: ApplyContext, appId: string, segment: SegmentRecord): string | undefined {
  const lookup = segmentLookup(context, appId, segment);
  for (const id of segmentRefs(segment.filter)) if (!lookup(id)) return `No segment ${id}.`;
  const cycle = findCycle(segment.id, segment.filter, lookup);
  return cycle ? `A segment may not contain itself: ${cycle.join(" → ")}.` : undefined;
}

interface Pending {
  environmentId: string;
  key: string;
  prepared: Extract<PreparedTargeting, { ok: true }>;
}

/** Every feature targeting whose inlined rules change when `segment` becomes what it is here, computed before writing. */
function pendingRetargets(context: ApplyContext, app: AppRecord, segment: SegmentRecord): Pending[] | string {
  const lookup = segmentLookup(context, app.id, segment);
  const pending: Pending[] = [];
  const features = context.features.listFeatures(app.id);
  for (const environmentId of app.environmentIds) {
    for (const feature of features) {
      const { targeting } = context.features.rulesOf(environmentId, feature.key);
      if (!targeting.segmentRules) continue;
      const prepared = prepareTargeting(targeting.segmentRules, lookup);
      if (!prepared.ok) return `Feature ${feature.key} in ${environmentId}: ${prepared.message}`;
      if (JSON.stringify(prepared.served) !== JSON.stringify(targeting.rules)) pending.push({ environmentId, key: feature.key, prepared });
    }
  }
  return pending;
}

export const SEGMENT_APPLIERS: SegmentAppliers = {
  "segment.create"(context, change) {
    const app = context.tenancy.getApp(change.appId);
    if (!app) return refused("NOT_FOUND", `No app ${change.appId}.`);
    const existing = context.segments.listSegments(app.id);
    if (existing.some((segment) => segment.id === change.segment.id || segment.name === change.segment.name)) return refused("CONFLICT", `A segment named ${change.segment.name} exists.`);
    const problem = filterProblem(context, app.id, change.segment);
    if (problem) return refused("INVALID_RULES", problem);
    context.segments.putSegment(app.id, change.segment);
    return {
      ok: true,
      value: { segment: change.segment },
      audit: { action: "segment.create", entity: segmentEntity(app.id, change.segment), details: { name: change.segment.name, filter: change.segment.filter } },
    };
  },

  "segment.update"(context, change) {
    const app = context.tenancy.getApp(change.appId);
    const before = app && context.segments.getSegment(app.id, change.segmentId);
    if (!app || !before) return refused("NOT_FOUND", `No segment ${change.segmentId} in app ${change.appId}.`);
    const { name, description, filter } = change.fields;
    if (name !== undefined && name !== before.name && context.segments.listSegments(app.id).some((segment) => segment.name === name)) return refused("CONFLICT", `A segment named ${name} exists.`);
    const segment: SegmentRecord = {
      ...before,
      ...(name !== undefined ? { name } : {}),
      ...(description !== undefined ? { description } : {}),
      ...(filter !== undefined ? { filter } : {}),
      updatedAt: change.at,
    };
    const problem = filterProblem(context, app.id, segment);
    if (problem) return refused("INVALID_RULES", problem);
    const pending = pendingRetargets(context, app, segment);
    if (typeof pending === "string") return refused("INVALID_RULES", pending);
    context.segments.putSegment(app.id, segment);
    const link = historyLink(context, change);
    const versions = new Map<string, number>();
    const retargeted: RetargetedFeature[] = pending.map(({ environmentId, key, prepared }) => {
      const written = saveTargeting(context, environmentId, key, prepared, change.at, link);
      versions.set(environmentId, written.flagStateVersion);
      return { environmentId, key, ...written };
    });
    const diff: Record<string, { from: unknown; to: unknown }> = {};
    for (const field of ["name", "description", "filter"] as const) {
      if (JSON.stringify(before[field]) !== JSON.stringify(segment[field])) diff[field] = { from: before[field], to: segment[field] };
    }
    return {
      ok: true,
      value: { segment, retargeted },
      audit: { action: "segment.update", entity: segmentEntity(app.id, segment), details: { changes: diff, retargeted } },
      effects: { flagStates: [...versions.entries()] },
    };
  },

  "segment.delete"(context, change) {
    const app = context.tenancy.getApp(change.appId);
    const segment = app && context.segments.getSegment(app.id, change.segmentId);
    if (!app || !segment) return refused("NOT_FOUND", `No segment ${change.segmentId} in app ${change.appId}.`);
    const users = describeUsage(segmentUsage(context, app, segment.id));
    if (users.length > 0) return refused("CONFLICT", `Segment ${segment.name} is used by ${users.join(", ")}.`);
    context.segments.removeSegment(app.id, segment.id);
    return { ok: true, value: { segment }, audit: { action: "segment.delete", entity: segmentEntity(app.id, segment), details: { name: segment.name } } };
  },
};
