import { hash } from "node:crypto";
import { environmentOf, BODY_LIMITS, type RouteContext, type RouteSpec } from "../core/route.js";
import type { HttpMethod } from "../core/router.js";
import { bearerToken } from "../core/auth.js";
import type { Services } from "../core/services.js";
import type { ApiRequest, ApiResponse, StreamResponse } from "../../http/types.js";
import { ERRORS, ServiceError } from "../../errors/catalogue.js";
import type { EvaluateJob, JobResult, OfrepRequest } from "../../serving/protocol.js";
import { ofrepError } from "../../serving/evaluation/ofrep-job.js";
import { refetchEvaluationFrame } from "../../features/sse-frames.js";
import { OfrepRevalidation, ifNoneMatchHolds } from "./ofrep-revalidation.js";

/** Bulk answers remembered for revalidation per process: one small entry per recent (key, context). */
const REVALIDATION_ENTRIES = 10_000;

const STREAM_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/** One memo per service graph, beside the code it speeds up (as the rules route keeps its prepared answers). */
const revalidations = new WeakMap<Services, OfrepRevalidation>();

function revalidationOf(services: Services): OfrepRevalidation {
  let revalidation = revalidations.get(services);
  if (revalidation === undefined) revalidations.set(services, (revalidation = new OfrepRevalidation(REVALIDATION_ENTRIES, services.config.evaluationCacheMs)));
  return revalidation;
}

/** The key the caller presented when it is a publishable one (the header forms first, as authentication reads them). */
function publishableKeyOf(context: RouteContext<Services>): string | undefined {
  if (context.principal.kind !== "publishable") return undefined;
  const { request } = context;
  const presented = bearerToken(request) ?? request.headers["x-api-key"]?.trim();
  return presented || new URLSearchParams(request.query).get("publishableKey") || undefined;
}

/** OFREP's body for what the API core refuses (credentials, load shedding), with the status of API.md §2. */
function renderOfrepError(error: ServiceError, params: Record<string, string>): ApiResponse {
  const status = ERRORS[error.code].status;
  const errorCode = status === 400 ? "PARSE_ERROR" : "GENERAL";
  const answer = ofrepError(status, errorCode, error.message, params.key);
  const headers: Record<string, string> = { ...answer.headers };
  if (error.retryAfterSeconds !== undefined) headers["retry-after"] = String(error.retryAfterSeconds);
  return { status, headers, body: answer.body };
}

function jobOf(services: Services, environmentId: string, request: ApiRequest, ofrep: { flagKey?: string; publishableKey?: string }): EvaluateJob {
  const { flagKey, publishableKey } = ofrep;
  const body: OfrepRequest = { body: request.body, contentType: request.headers["content-type"] };
  if (flagKey !== undefined) body.flagKey = flagKey;
  if (publishableKey !== undefined) body.publishableKey = publishableKey;
  return {
    kind: "evaluate",
    environmentId,
    minFlagStateVersion: services.flagStates.current(environmentId),
    query: "",
    onlyEnabled: false,
    attributeEpoch: services.evaluation.attributeEpoch(environmentId),
    attributeCacheMs: services.config.evaluationCacheMs,
    ofrep: body,
  };
}

function notModified(etag: string): ApiResponse {
  return { status: 304, headers: { etag }, body: "" };
}

/**
 * `POST /ofrep/v1/evaluate/flags`: every flag, with an ETag. A revalidation (`If-None-Match`) is answered 304 from the
 * revalidation memo while nothing the answer depends on moved, else after evaluating (when the ETag is unchanged),
 * and its ETag is remembered then: only clients that revalidate are remembered, so a first request costs no digest of
 * its body and no memo entry.
 */
function evaluateBulk(context: RouteContext<Services>): ApiResponse | Promise<ApiResponse> {
  const { environmentId } = environmentOf(context.principal);
  const { services, request } = context;
  const publishableKey = publishableKeyOf(context);
  const ifNoneMatch = request.headers["if-none-match"];
  // The version and attribute epoch a 304 stands on are read after acknowledged attribute calls are projected.
  return services.evaluation.afterAttributes(environmentId, () => {
    const job = jobOf(services, environmentId, request, publishableKey === undefined ? {} : { publishableKey });
    if (ifNoneMatch === undefined) return services.evaluation.evaluateOfrep(job, false);
    const revalidation = revalidationOf(services);
    // The answer is a function of the environment, the key (its event stream) and the body (the context and its type).
    const body = request.body ?? Buffer.alloc(0);
    const memoKey = `${environmentId}\u0000${publishableKey ?? ""}\u0000${request.headers["content-type"] ?? ""}\u0000${hash("sha1", body, "base64")}`;
    const etag = revalidation.current(memoKey, job.minFlagStateVersion, job.attributeEpoch);
    if (etag !== undefined && ifNoneMatchHolds(ifNoneMatch, etag)) return notModified(etag);
    const finish = (answer: JobResult): ApiResponse => {
      const etag = answer.headers?.etag;
      if (answer.status !== 200 || etag === undefined) return answer;
      revalidation.remember(memoKey, etag, job.minFlagStateVersion, job.attributeEpoch);
      return ifNoneMatchHolds(ifNoneMatch, etag) ? notModified(etag) : answer;
    };
    const answer = services.evaluation.evaluateOfrep(job, false);
    return answer instanceof Promise ? answer.then(finish) : finish(answer);
  });
}

/**
 * `POST /ofrep/v1/evaluate/flags/{key}`: one flag, and its `check` event logged without waiting (API.md §14), as
 * `/features/enabled`'s events are.
 */
function evaluateFlag(context: RouteContext<Services>): ApiResponse | Promise<ApiResponse> {
  const { environmentId } = environmentOf(context.principal);
  const { services, request } = context;
  return services.evaluation.afterAttributes(environmentId, () =>
    services.evaluation.evaluateOfrep(jobOf(services, environmentId, request, { flagKey: context.params.key! }), true),
  );
}

/** `GET /ofrep/v1/events`: the live-update stream of §5 with OFREP's frame, under the same limits per key. */
function openEvents(context: RouteContext<Services>): StreamResponse {
  const { environmentId } = environmentOf(context.principal);
  const environment = context.services.tenancy.getEnvironment(environmentId);
  if (!environment) throw new ServiceError("UNAUTHORIZED", "The key's environment no longer exists.");
  return context.services.live.open(
    { environmentId, keyId: `${context.principal.kind}:${environmentId}`, currentVersion: environment.flagStateVersion, frame: refetchEvaluationFrame },
    STREAM_HEADERS,
  );
}

const OFREP_SPEC = { access: "environment", cors: true, acceptsApiKeyHeader: true, renderError: renderOfrepError } as const;

/** OpenFeature's remote evaluation protocol (API.md §14): publishable or secret key, as a Bearer token or `X-API-Key`. */
export const OFREP_ROUTES: [HttpMethod, string, RouteSpec<Services>][] = [
  ["POST", "/ofrep/v1/evaluate/flags", { ...OFREP_SPEC, bodyLimit: BODY_LIMITS.single, handle: evaluateBulk }],
  ["POST", "/ofrep/v1/evaluate/flags/:key", { ...OFREP_SPEC, bodyLimit: BODY_LIMITS.single, handle: evaluateFlag }],
  ["GET", "/ofrep/v1/events", { ...OFREP_SPEC, bodyLimit: 0, handle: openEvents }],
];
