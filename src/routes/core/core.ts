import { ServiceError } from "../../errors/catalogue.js";
import type { Logger } from "../../observability/logger.js";
import type { Metrics } from "../../observability/metrics.js";
import { authenticate, type Access, type AuthContext } from "./auth.js";
import { preflight, withCors } from "./cors.js";
import type { RateLimiter } from "./rate-limiter.js";
import { errorFor, errorResponse } from "../../http/responses.js";
import type { RouteContext, RouteResult, RouteSpec } from "./route.js";
import type { Router } from "./router.js";
import type { ApiCore, ApiRequest, ApiResponse, RouteDecision } from "../../http/types.js";
import type { ProjectionGate } from "../../tracking/projection-driver.js";

export interface CoreServices {
  auth: AuthContext;
  log: Logger;
  /** Requests per second per environment key and per client address; the admin API is not limited. */
  rateLimits: { perKey: RateLimiter; perAddress: RateLimiter };
  /** Whether the service is shutting down: new work is refused with a retryable 503. */
  isDraining(): boolean;
  /** Per-route request counts and latencies (GET /metrics); absent in unit tests that build a bare core. */
  metrics?: Metrics;
  /** Reads of derived data wait here for what was acknowledged before them; absent in unit tests of a bare core. */
  projection?: Pick<ProjectionGate, "caughtUp">;
}

/** Key and token prefixes (API.md §1, §8); a path segment that starts with one is a credential and never reaches a log. */
const KEY_SEGMENT = /^(trk|pub|sec|adm|sya|syr)_[^/]*/;

/**
 * The request path as it may be logged: the tracking API carries its key in the first segment, so a fault there
 * would otherwise write the key to the log. Any segment shaped like a key is masked the same way.
 */
export function loggablePath(path: string, access?: Access): string {
  const segments = path.split("/");
  for (let index = 0; index < segments.length; index++) {
    const isTrackingKey = access === "tracking-path" && index === 1;
    if (isTrackingKey || KEY_SEGMENT.test(segments[index]!)) segments[index] = ":key";
  }
  return segments.join("/");
}

function toErrorResponse(error: unknown, log: Logger, request: ApiRequest, access?: Access, render: (error: ServiceError) => ApiResponse = errorResponse): ApiResponse {
  if (error instanceof ServiceError) return render(error);
  log.error("request failed", { method: request.method, path: loggablePath(request.path, access), error: String((error as Error)?.stack ?? error) });
  return render(new ServiceError("INTERNAL"));
}

/** The transport-free API: routing, authentication, CORS, and the error envelope around every handler. */
export function createApiCore<S extends CoreServices>(services: S, router: Router<RouteSpec<S>>): ApiCore {
  const notFound: RouteDecision = {
    bodyLimit: 0,
    handle: (request) => withCors(errorFor("ROUTE_NOT_FOUND", `No route for ${request.method} ${request.path}.`), request.headers.origin),
  };
  const preflightDecision: RouteDecision = { bodyLimit: 0, handle: (request) => preflight(request.headers.origin) };

  const decisions = new WeakMap<object, RouteDecision>();

  function decisionFor(spec: RouteSpec<S>, params: Record<string, string>, method: string, pattern: string): RouteDecision {
    const meter = services.metrics?.meter(spec, method, pattern);
    // Management routes (the management and analytics API, the dashboard's data, MCP, the Reflag API) read what is
    // projected from tracking, as do the routes that say so: each waits for what was acknowledged before it.
    const readsProjection = spec.access === "admin" || spec.readsProjection === true;
    const render = spec.renderError === undefined ? undefined : (error: ServiceError) => spec.renderError!(error, params);
    return {
      bodyLimit: spec.bodyLimit,
      // A route with its own error body answers a body over its limit in it too.
      ...(render === undefined
        ? {}
        : { refuseTooLarge: (request: Pick<ApiRequest, "headers">) => withCors(render(new ServiceError("PAYLOAD_TOO_LARGE")), spec.cors ? request.headers.origin : undefined) }),
      handle(request) {
        const origin = spec.cors ? request.headers.origin : undefined;
        const started = meter === undefined ? 0 : performance.now();
        const finish = (result: RouteResult): RouteResult => {
          meter?.observe(result.status, (performance.now() - started) / 1000);
          return withCors(result, origin);
        };
        const fail = (error: unknown): ApiResponse => {
          const response = toErrorResponse(error, services.log, request, spec.access, render);
          meter?.observe(response.status, (performance.now() - started) / 1000);
          return withCors(response, origin);
        };
        try {
          if (services.isDraining() && spec.access !== "public") throw new ServiceError("SHUTTING_DOWN", undefined, undefined, 1);
          const { perKey, perAddress } = services.rateLimits;
          if (spec.access !== "admin" && spec.access !== "public" && perAddress.enabled && !perAddress.allow(request.remoteAddress())) {
            throw new ServiceError("RATE_LIMITED", "Too many requests from this address.", undefined, perAddress.retryAfterSeconds());
          }
          const principal = authenticate(services.auth, request, spec.access, params, spec.permission, spec.acceptsApiKeyHeader);
          if ("environmentId" in principal && !perKey.allow(`${principal.kind}:${principal.environmentId}`)) {
            throw new ServiceError("RATE_LIMITED", "Too many requests for this key.", undefined, perKey.retryAfterSeconds());
          }
          const context: RouteContext<S> = { request, params, principal, services };
          const waiting = readsProjection ? services.projection?.caughtUp() : undefined;
          const result = waiting === undefined ? spec.handle(context) : waiting.then(() => spec.handle(context));
          return result instanceof Promise ? result.then(finish, fail) : finish(result);
        } catch (error) {
          return fail(error);
        }
      },
    };
  }

  return {
    decide(method, path) {
      if (method === "OPTIONS") return preflightDecision;
      let match;
      try {
        match = router.match(method, path);
      } catch (error) {
        return { bodyLimit: 0, handle: (request) => toErrorResponse(error, services.log, request) };
      }
      if (!match || match === "methodMismatch") return notFound;
      // Literal routes come back as the same match object every time: build their decision once.
      let decision = decisions.get(match);
      if (!decision) {
        decision = decisionFor(match.route, match.params, method, match.pattern);
        if (Object.keys(match.params).length === 0) decisions.set(match, decision);
      }
      return decision;
    },
    reject(code, request) {
      return withCors(errorFor(code), request.headers.origin);
    },
  };
}
