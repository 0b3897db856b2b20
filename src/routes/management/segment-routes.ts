/** Segments per app and their member companies per environment (API.md §10); every write is a change. */
import { appOrNotFound } from "../core/route-lookups.js";
import { ok } from "../../http/responses.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import { ServiceError, type ValidationIssue } from "../../errors/catalogue.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import { validateFilterTree } from "../../schemas/rules.js";
import { CreateSegmentBody, UpdateSegmentBody } from "../../schemas/segments.js";
import type { Services } from "../core/services.js";
import { randomBase62 } from "../../tenancy/identifiers.js";
import { checkListLimit, DEFAULT_LIST_LIMIT } from "../../storage/cursor.js";
import { findCycle, segmentRefs } from "../../management/segments/inline.js";
import { segmentMembers } from "../../management/segments/members.js";
import type { SegmentRecord } from "../../management/segments/segment-records.js";
import { SegmentRepository } from "../../management/segments/segment-repository.js";
import { segmentUsage } from "../../management/segments/segment-usage.js";
import { StageRepository } from "../../features/stage-repository.js";
import type { AppRecord } from "../../tenancy/tenancy-records.js";

type Context = RouteContext<Services>;


function segmentOrNotFound(context: Context, appId: string, idOrName: string): SegmentRecord {
  const segment = new SegmentRepository(context.services.store).findSegment(appId, idOrName);
  if (!segment) throw new ServiceError("NOT_FOUND", `No segment ${idOrName} in app ${appId}.`);
  return segment;
}

/**
 * A segment's filter: the five filter types over `company.*` fields, and segment nodes naming existing segments of
 * the app, without a way back to the segment itself. 400 naming `filter…` otherwise (apply checks again).
 */
function checkFilter(context: Context, appId: string, segmentId: string, filter: unknown): void {
  const issues: ValidationIssue[] = [];
  validateFilterTree(filter, "filter", issues, { segments: true, companyOnly: true });
  if (issues.length > 0) throw new ServiceError("INVALID_RULES", undefined, issues);
  const segments = new SegmentRepository(context.services.store);
  const lookup = (id: string) => (id === segmentId ? { filter } : segments.getSegment(appId, id));
  for (const id of segmentRefs(filter)) if (!lookup(id)) issues.push({ path: "filter", message: `No segment ${id} in app ${appId}` });
  const cycle = issues.length === 0 ? findCycle(segmentId, filter, lookup) : undefined;
  if (cycle) issues.push({ path: "filter", message: `A segment may not contain itself: ${cycle.join(" → ")}` });
  if (issues.length > 0) throw new ServiceError("INVALID_RULES", undefined, issues);
}

export function presentSegment(segment: SegmentRecord) {
  return { id: segment.id, name: segment.name, description: segment.description, filter: segment.filter, createdAt: segment.createdAt, updatedAt: segment.updatedAt };
}

/** A segment as the reads answer it: with who names it, so a person sees what an edit retargets or a delete needs. */
function presentSegmentInUse(context: Context, app: AppRecord, segment: SegmentRecord) {
  const repositories = { segments: new SegmentRepository(context.services.store), features: context.services.features, stages: new StageRepository(context.services.store) };
  return { ...presentSegment(segment), usedBy: segmentUsage(repositories, app, segment.id) };
}

const read = (handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("read", BODY_LIMITS.none, handle);
const write = (bodyLimit: number, handle: RouteSpec<Services>["handle"]) => managementRoute<Services>("write", bodyLimit, handle);

export const SEGMENT_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/apps/:appId/segments",
    read((context) => {
      const app = appOrNotFound(context);
      return ok({ segments: new SegmentRepository(context.services.store).listSegments(app.id).map((segment) => presentSegmentInUse(context, app, segment)) });
    }),
  ],
  [
    "POST",
    "/admin/apps/:appId/segments",
    write(BODY_LIMITS.admin, async (context) => {
      const app = appOrNotFound(context);
      const body = schemaBody(context.request, CreateSegmentBody);
      const id = `sg_${randomBase62(10)}`;
      checkFilter(context, app.id, id, body.filter);
      const envelope = envelopeFor(context);
      const segment: SegmentRecord = { id, name: body.name, description: body.description ?? null, filter: body.filter, createdAt: envelope.at, updatedAt: envelope.at };
      const created = await submitChange(context, "segment.create", { appId: app.id, segment }, envelope);
      return ok({ segment: presentSegment(created.segment) });
    }),
  ],
  [
    "GET",
    "/admin/apps/:appId/segments/:segment",
    read((context) => {
      const app = appOrNotFound(context);
      return ok({ segment: presentSegmentInUse(context, app, segmentOrNotFound(context, app.id, context.params.segment!)) });
    }),
  ],
  [
    "PATCH",
    "/admin/apps/:appId/segments/:segment",
    write(BODY_LIMITS.admin, async (context) => {
      const app = appOrNotFound(context);
      const body = schemaBody(context.request, UpdateSegmentBody);
      const before = segmentOrNotFound(context, app.id, context.params.segment!);
      if (body.filter !== undefined) checkFilter(context, app.id, before.id, body.filter);
      const fields = {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.filter !== undefined ? { filter: body.filter } : {}),
      };
      const { segment, retargeted } = await submitChange(context, "segment.update", { appId: app.id, segmentId: before.id, fields });
      return ok({ segment: presentSegment(segment), retargeted });
    }),
  ],
  [
    "DELETE",
    "/admin/apps/:appId/segments/:segment",
    write(BODY_LIMITS.none, async (context) => {
      const app = appOrNotFound(context);
      const segment = segmentOrNotFound(context, app.id, context.params.segment!);
      await submitChange(context, "segment.delete", { appId: app.id, segmentId: segment.id });
      return ok();
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/segments/:segment/companies",
    read((context) => {
      context.services.store.refresh();
      const environment = context.services.tenancy.getEnvironment(context.params.envId!);
      if (!environment) throw new ServiceError("NOT_FOUND", `No environment ${context.params.envId}.`);
      const segment = segmentOrNotFound(context, environment.appId, context.params.segment!);
      const query = new URLSearchParams(context.request.query);
      // `after` is a company id here (companies are paged in id order), not a log cursor.
      const after = query.get("after") || undefined;
      const rawLimit = query.get("limit");
      const limit = rawLimit === null || rawLimit === "" ? DEFAULT_LIST_LIMIT : checkListLimit(/^[0-9]{1,10}$/.test(rawLimit) ? Number(rawLimit) : Number.NaN);
      const segments = new SegmentRepository(context.services.store);
      return ok({ ...segmentMembers(context.services.store, environment.id, segment, (id) => segments.getSegment(environment.appId, id), after, limit) });
    }),
  ],
];
