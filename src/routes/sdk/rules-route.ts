import { createHash } from "node:crypto";
import { okText } from "../../http/responses.js";
import { environmentOf, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import type { ApiResponse } from "../../http/types.js";
import { ServiceError } from "../../errors/catalogue.js";
import { waitForFlagState, waitForVersionParam } from "../../features/wait-for-version.js";
import type { Services } from "../core/services.js";
import { displayName, isSwitchedOn, prerequisitesOf } from "../../features/feature-records.js";
import { servedRulesOf } from "../../features/served-rules.js";

interface PreparedRules {
  flagStateVersion: number;
  features: { key: string }[];
  body: string;
  etag: string;
}

type PreparedCache = Map<string, PreparedRules>;

/** The rules answer depends only on (environment, flagStateVersion): it is built once per version. */
function prepare(preparedByEnvironment: PreparedCache, services: Services, environmentId: string): PreparedRules {
  const environment = services.tenancy.getEnvironment(environmentId);
  if (!environment) throw new ServiceError("UNAUTHORIZED", "The key's environment no longer exists.");
  const cached = preparedByEnvironment.get(environmentId);
  if (cached && cached.flagStateVersion === environment.flagStateVersion) return cached;
  const listed = services.features.listEnvironmentFeatures(environment);
  const served = servedRulesOf(listed.map(({ feature, state }) => ({ key: feature.key, state })));
  const features = listed.map(({ feature, state }) => ({
    key: feature.key,
    id: feature.id,
    name: displayName(feature),
    description: feature.description,
    link: feature.link,
    createdAt: feature.createdAt,
    stage: feature.stage,
    optInEnabled: feature.optInEnabled,
    // Only what SDKs evaluate: the rules with segments inlined, not the segment references they were saved with.
    // Served exactly as compiled for the server's own evaluation (kill switch and prerequisites compiled in), so
    // local evaluation agrees.
    targeting: { version: state.targeting.version, rules: served.get(feature.key)! },
    config: state.config,
    enabled: isSwitchedOn(state),
    prerequisites: prerequisitesOf(state),
  }));
  const body = JSON.stringify({ success: true, flagStateVersion: environment.flagStateVersion, features });
  const prepared = {
    flagStateVersion: environment.flagStateVersion,
    features,
    body,
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
  };
  preparedByEnvironment.set(environmentId, prepared);
  return prepared;
}

async function getRules(cache: PreparedCache, context: RouteContext<Services>): Promise<ApiResponse> {
  const { environmentId } = environmentOf(context.principal);
  const { services, request } = context;
  const wanted = waitForVersionParam(request.query);
  if (wanted !== undefined) {
    await waitForFlagState(services, environmentId, wanted);
  }
  const params = request.query.includes("key=") ? new URLSearchParams(request.query) : undefined;
  const onlyKey = params?.get("key") ?? undefined;
  const prepared = prepare(cache, services, environmentId);
  if (onlyKey !== undefined) {
    const features = prepared.features.filter((feature) => feature.key === onlyKey);
    return okText(JSON.stringify({ success: true, flagStateVersion: prepared.flagStateVersion, features }));
  }
  if (request.headers["if-none-match"] === prepared.etag) return { status: 304, headers: { etag: prepared.etag }, body: "" };
  return okText(prepared.body, { etag: prepared.etag });
}

/** `GET /features`: the rules for local evaluation, secret key only (API.md §3). */
export function createRulesRoutes(): [HttpMethod, string, RouteSpec<Services>][] {
  const cache: PreparedCache = new Map();
  return [["GET", "/features", { access: "secret", bodyLimit: 0, cors: true, handle: (context) => getRules(cache, context) }]];
}
