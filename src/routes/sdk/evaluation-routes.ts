import { environmentOf, type RouteContext, type RouteSpec } from "../kit/route.js";
import type { HttpMethod } from "../kit/router.js";
import type { ApiResponse } from "../../http/types.js";
import { waitForFlagState, waitForVersionParam } from "../../features/wait-for-version.js";
import type { Services } from "../kit/services.js";
import type { EvaluateJob, JobResult } from "../../jobs/protocol.js";
import { preferredEncoding } from "../../evaluation/answer-encoding.js";
import { evaluateEnabledReplicated } from "./replicated-tracking.js";

function evaluate(context: RouteContext<Services>, onlyEnabled: boolean): ApiResponse | Promise<ApiResponse> {
  const { environmentId } = environmentOf(context.principal);
  const { services, request } = context;
  const wanted = waitForVersionParam(request.query);
  const acceptEncoding = request.headers["accept-encoding"];
  // Attributes of user and company calls acknowledged before this request fill its context (remote context), so
  // their projection comes first; before the answer cache too, which the projection invalidates.
  const attributes = services.projection.attributeWrites.projected(environmentId);
  const flagState = wanted === undefined ? undefined : waitForFlagState(services, environmentId, wanted);
  const now = () => evaluateNow(services, environmentId, request.query, acceptEncoding, onlyEnabled);
  if (attributes === undefined && flagState === undefined) return now();
  return Promise.all([attributes, flagState]).then(now);
}

/**
 * Synchronous when the answer is remembered, and when the executor evaluates inline: a context answered at once costs
 * no promise, and its bytes go to the front end straight from the evaluator's buffer.
 */
function evaluateNow(services: Services, environmentId: string, query: string, acceptEncoding: string | undefined, onlyEnabled: boolean): ApiResponse | Promise<ApiResponse> {
  const flagStateVersion = services.flagStates.current(environmentId);
  // `/features/enabled` records feature events on every call, so only `/features/evaluated` is answered from memory.
  const cache = onlyEnabled || !services.evaluationCache.consult() ? undefined : services.evaluationCache;
  const encoding = preferredEncoding(acceptEncoding);
  // Compressed and plain answers of one query are different entries.
  const cacheKey = encoding === undefined ? query : `${query}\u0000${encoding}`;
  const cached = cache?.get(environmentId, cacheKey, flagStateVersion);
  // Answers share the remembered headers object: nothing edits a response's headers in place (withCors replaces them).
  if (cached) return { status: cached.status, headers: cached.headers, body: cached.body };
  const attributeEpoch = services.evaluationCache.attributeEpoch(environmentId);
  const job: EvaluateJob = {
    kind: "evaluate",
    environmentId,
    minFlagStateVersion: flagStateVersion,
    query,
    onlyEnabled,
    attributeEpoch,
    attributeCacheMs: services.config.evaluationCacheMs,
    ...(encoding !== undefined ? { encoding, compressMinBytes: services.config.compressMinBytes } : {}),
  };
  const remember = (answer: JobResult): JobResult => {
    cache?.put(environmentId, cacheKey, flagStateVersion, attributeEpoch, { status: answer.status, body: answer.body, headers: answer.headers ?? {} });
    return answer;
  };
  const { executor } = services;
  if (!onlyEnabled && executor.evaluateNow !== undefined) return remember(executor.evaluateNow(job));
  if (onlyEnabled && services.cluster !== undefined) return evaluateEnabledReplicated(services.cluster, services.cluster.jobContext, job);
  if (!onlyEnabled) return executor.run(job).then(remember);
  // Answered before its `evaluate` events are committed (API.md §4): the projector is told they are on their way.
  return executor.run(job).then((answer) => {
    services.projection.appended();
    return answer;
  });
}

/** `GET /features/evaluated` and `/features/enabled` (API.md §3): publishable or secret key; the work runs in the executor. */
export const EVALUATION_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["GET", "/features/evaluated", { access: "environment", bodyLimit: 0, cors: true, handle: (context) => evaluate(context, false) }],
  ["GET", "/features/enabled", { access: "environment", bodyLimit: 0, cors: true, handle: (context) => evaluate(context, true) }],
];
