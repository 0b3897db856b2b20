/**
 * The Reflag management surface under `/api` (API.md §10): what `@reflag/cli` calls, in the shapes it reads. Only
 * these paths are routed, so the rest of `/api` (the MCP endpoint, `/api/mcp`) stays free for other routes. The
 * credential is a management one (an API token, the admin token, a member session) and its role is checked by the
 * one role table like every `/admin` route.
 */
import { appOrNotFound } from "../core/route-lookups.js";
import * as v from "valibot";
import { ok } from "../../http/responses.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { schemaBody } from "../core/schema-body.js";
import { ServiceError } from "../../errors/catalogue.js";
import { displayName, type FeatureRecord } from "../../features/feature-records.js";
import { envelopeFor, submitChange } from "../core/submit.js";
import { CreateFlagBody, FlagsQuery } from "../../schemas/reflag.js";
import { parseOrThrow } from "../../schemas/issues.js";
import type { Services } from "../core/services.js";
import { newFeatureId } from "../../tenancy/identifiers.js";
import type { AppRecord, EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { ORG, presentReflagApp, presentReflagFlag, presentReflagUser, presentRemoteConfigs, type ReflagStage } from "./present.js";
import { stageOf } from "./stages.js";
import { StageRepository } from "../../features/stage-repository.js";

type Context = RouteContext<Services>;


function environmentsOf(context: Context, app: AppRecord): EnvironmentRecord[] {
  return app.environmentIds.flatMap((id) => context.services.tenancy.getEnvironment(id) ?? []);
}

/** The query as a plain object of its first values: the schema refuses anything it does not know. */
function queryObject(query: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(query)) if (!(name in out)) out[name] = value;
  return out;
}

type SortField = v.InferOutput<typeof FlagsQuery>["sortBy"];

function sortValue(feature: FeatureRecord, stage: ReflagStage | null, field: SortField): string | number {
  switch (field) {
    case "key":
      return feature.key;
    case "name":
      return displayName(feature);
    case "createdAt":
      return feature.createdAt;
    case "stage":
      return stage ? stage.order : Number.MAX_SAFE_INTEGER;
  }
}

function compare(a: string | number, b: string | number): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  // Code-unit order, not locale order: the same on every node and in every test.
  return a < b ? -1 : a > b ? 1 : 0;
}

export const REFLAG_API_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/api/bootstrap",
    managementRoute<Services>("read", BODY_LIMITS.none, (context) => {
      const { tenancy, accounts } = context.services;
      const principal = context.principal as Parameters<typeof presentReflagUser>[0];
      const member = principal.kind === "admin" ? undefined : accounts.repository.getMember(principal.memberId);
      const apps = tenancy.listApps().map((app) => presentReflagApp(app, environmentsOf(context, app)));
      // Feature keys are free-form here (any printable text), which is Reflag's "custom" key format.
      return ok({ org: { ...ORG, featureKeyFormat: "custom", apps }, user: presentReflagUser(principal, member) });
    }),
  ],
  [
    "GET",
    "/api/apps/:appId/features",
    managementRoute<Services>("read", BODY_LIMITS.none, (context) => {
      context.services.store.refresh();
      const app = appOrNotFound(context);
      const query = parseOrThrow(v.safeParse, FlagsQuery, queryObject(context.request.query), "INVALID_QUERY");
      if (!app.environmentIds.includes(query.envId)) throw new ServiceError("NOT_FOUND", `No environment ${query.envId} in app ${app.id}.`);
      const environment = context.services.tenancy.getEnvironment(query.envId)!;
      const rows = context.services.features.listEnvironmentFeatures(environment).map(({ feature, state }) => {
        const stage = stageOf(context.services, app.id, feature);
        return { feature, stage, sortKey: sortValue(feature, stage, query.sortBy), config: state.config };
      });
      const direction = query.sortOrder === "desc" ? -1 : 1;
      // Ties fall back to the key so that every order is total and stable.
      rows.sort((a, b) => direction * (compare(a.sortKey, b.sortKey) || compare(a.feature.key, b.feature.key)));
      // Without pageSize the CLI gets every flag (it never pages, and `flags types` needs them all).
      const pageSize = query.pageSize ?? Math.max(rows.length, 1);
      const pageIndex = query.pageIndex ?? 0;
      const page = rows.slice(pageIndex * pageSize, (pageIndex + 1) * pageSize);
      const data = page.map(({ feature, stage, config }) =>
        presentReflagFlag(feature, stage, query.includeRemoteConfigs ? presentRemoteConfigs(feature, config) : []),
      );
      return ok({
        data,
        metadata: { appId: app.id, envId: environment.id, flagStateVersion: environment.flagStateVersion },
        totalCount: rows.length,
        pageIndex,
        pageSize,
        sortBy: query.sortBy,
        sortOrder: query.sortOrder,
      });
    }),
  ],
  [
    "POST",
    "/api/apps/:appId/features",
    managementRoute<Services>("write", BODY_LIMITS.admin, async (context) => {
      const app = appOrNotFound(context);
      const body = schemaBody(context.request, CreateFlagBody);
      const envelope = envelopeFor(context);
      // A Reflag flag is always in a release stage, and the CLI prints its name: a new one starts in the app's first
      // stage, as a label and id only (its targeting stays empty, as §6's `stage` field leaves it).
      const first = new StageRepository(context.services.store).listStages(app.id)?.[0];
      const fields = {
        name: body.name,
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(first ? { stage: first.name, stageId: first.id } : {}),
      };
      const { feature } = await submitChange(
        context,
        "feature.put",
        { appId: app.id, featureKey: body.key, featureId: newFeatureId(), fields, createOnly: true },
        envelope,
      );
      return ok({ feature: { id: feature.id, key: feature.key, name: displayName(feature), description: feature.description, createdAt: feature.createdAt } });
    }),
  ],
];
