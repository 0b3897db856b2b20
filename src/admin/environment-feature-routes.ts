import { ok } from "../api/responses.js";
import { BODY_LIMITS, managementRoute, type RouteContext, type RouteSpec } from "../api/route.js";
import type { HttpMethod } from "../api/router.js";
import type { ApiResponse } from "../api/types.js";
import { ServiceError } from "../errors/catalogue.js";
import type { HistoryEntry } from "../features/records.js";
import type { Services } from "../services.js";
import type { EnvironmentRecord } from "../tenancy/records.js";
import type { EvaluateJob } from "../workers/protocol.js";
import { presentFeature } from "./present.js";

type Context = RouteContext<Services>;

function environmentOrNotFound(context: Context): EnvironmentRecord {
  context.services.store.refresh();
  const environment = context.services.tenancy.getEnvironment(context.params.envId!);
  if (!environment) throw new ServiceError("NOT_FOUND", `No environment ${context.params.envId}.`);
  return environment;
}

/** The newest targeting or config version: when the feature last changed in this environment, and who did it. */
function lastChangeOf(history: HistoryEntry[]): { at: string; kind: string; version: number; actor: HistoryEntry["actor"] | null } | null {
  let last: HistoryEntry | undefined;
  for (const entry of history) if (!last || entry.at >= last.at) last = entry;
  return last ? { at: last.at, kind: last.kind, version: last.version, actor: last.actor ?? null } : null;
}

/**
 * Reads the dashboard needs beyond API.md §6 (our decisions, docs/API.md §9): every feature of an environment with
 * its rules and last change in one call (the feature list), and an evaluation by the service's own evaluator for a
 * context typed in the dashboard ("try it"), answered exactly as `GET /features/evaluated` answers an SDK.
 */
export const ENVIRONMENT_FEATURE_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  [
    "GET",
    "/admin/environments/:envId/features",
    managementRoute("read", BODY_LIMITS.none, (context) => {
      const environment = environmentOrNotFound(context);
      const { features } = context.services;
      const list = features.listEnvironmentFeatures(environment).map(({ feature, state }) => ({
        ...presentFeature(feature),
        targeting: state.targeting,
        config: state.config,
        lastChange: lastChangeOf(features.listHistory(environment.id, feature.key)),
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
        attributeEpoch: services.evaluationCache.attributeEpoch(environment.id),
        // Fresh attributes every time: "try it" right after tracking a company must see what was tracked.
        attributeCacheMs: 0,
      };
      const answer = await services.executor.run(job);
      return { status: answer.status, headers: { "content-type": "application/json", "cache-control": "no-store", ...answer.headers }, body: answer.body };
    }),
  ],
];
