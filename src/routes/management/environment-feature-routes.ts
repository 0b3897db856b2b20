import { ok } from "../../http/responses.js";
import { environmentOrNotFound } from "../core/route-lookups.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { ApiResponse } from "../../http/types.js";
import { isSwitchedOn, prerequisitesOf, type FeatureRecord, type HistoryEntry } from "../../features/feature-records.js";
import { staleFlags } from "../mcp/stale-flags.js";
import type { Services } from "../core/services.js";
import type { EvaluateJob } from "../../serving/protocol.js";
import { presentFeature } from "./present.js";

type Context = RouteContext<Services>;


type LastChange = { at: string; kind: HistoryEntry["kind"] | "settings"; version: number | null; actor: HistoryEntry["actor"] | null };

/**
 * When the feature last changed as this environment shows it, and who did it: its newest targeting or config
 * version, or a change of its app-level fields (a description, a stage), whichever came last.
 */
function lastChangeOf(feature: FeatureRecord, history: HistoryEntry[]): LastChange | null {
  let last: HistoryEntry | undefined;
  for (const entry of history) if (!last || entry.at >= last.at) last = entry;
  const rules: LastChange | null = last ? { at: last.at, kind: last.kind, version: last.version, actor: last.actor ?? null } : null;
  const fields = feature.fieldsChanged;
  if (fields && (!rules || fields.at > rules.at)) return { at: fields.at, kind: "settings", version: null, actor: fields.actor };
  return rules;
}

/**
 * Reads the dashboard needs beyond API.md §6 (our decisions, docs/API.md §9): every feature of an environment with
 * its rules, last change and stale verdict in one call (the feature list), and an evaluation by the service's own evaluator for a
 * context typed in the dashboard ("try it"), answered exactly as `GET /features/evaluated` answers an SDK.
 */
export const ENVIRONMENT_FEATURE_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/environments/:envId/features",
    managementRoute("read", BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const { features, tenancy, store } = context.services;
      const listed = features.listEnvironmentFeatures(environment);
      // The MCP list_flags verdict (API.md §12), over every environment of the app, so both show the same mark.
      const app = tenancy.getApp(environment.appId);
      const environments = (app?.environmentIds ?? [environment.id]).flatMap((id) => tenancy.getEnvironment(id) ?? []);
      const stale = staleFlags(store, features, environments, listed.map(({ feature }) => feature), Date.now());
      const list = listed.map(({ feature, state }) => ({
        ...presentFeature(feature),
        targeting: state.targeting,
        config: state.config,
        enabled: isSwitchedOn(state),
        prerequisites: prerequisitesOf(state),
        lastChange: lastChangeOf(feature, features.listHistory(environment.id, feature.key)),
        stale: stale.get(feature.key)!.stale,
        staleReason: stale.get(feature.key)!.reason,
      }));
      return ok({ flagStateVersion: environment.flagStateVersion, features: list });
    }),
  ],
  [
    "GET",
    "/admin/environments/:envId/evaluate",
    managementRoute("read", BODY_LIMITS.none, async (context): Promise<ApiResponse> => {
      const environment = environmentOrNotFound(context);
      const { services } = context;
      // The query is the one an SDK sends to /features/evaluated (context.<path>=…, key=…), evaluated by the same job.
      const job: EvaluateJob = {
        kind: "evaluate",
        environmentId: environment.id,
        minFlagStateVersion: services.flagStates.current(environment.id),
        query: context.request.query,
        onlyEnabled: false,
        attributeEpoch: services.evaluation.attributeEpoch(environment.id),
        // Fresh attributes every time: "try it" right after tracking a company must see what was tracked.
        attributeCacheMs: 0,
      };
      const answer = await services.executor.run(job);
      return { status: answer.status, headers: { "content-type": "application/json", "cache-control": "no-store", ...answer.headers }, body: answer.body };
    }),
  ],
];
