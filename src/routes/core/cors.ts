import type { ApiResponse } from "../../http/types.js";

// `x-api-key` and `if-none-match`: what OpenFeature's OFREP providers send (API.md §14).
const ALLOWED_HEADERS = "authorization, content-type, bucket-sdk-version, reflag-sdk-version, x-api-key, if-none-match";
const ALLOWED_METHODS = "GET, POST, PUT, DELETE, OPTIONS";

/**
 * Browsers call the front-facing API from other origins with credentials; echo the origin rather than `*`. An answer
 * with an ETag exposes it, so that a script can send it back as `If-None-Match` (OFREP's web provider does).
 */
export function withCors<R extends { headers?: Record<string, string> }>(response: R, origin: string | undefined): R {
  if (!origin) return response;
  response.headers = {
    ...response.headers,
    "access-control-allow-origin": origin,
    "access-control-allow-credentials": "true",
    vary: "Origin",
    ...(response.headers?.etag !== undefined ? { "access-control-expose-headers": "ETag" } : {}),
  };
  return response;
}

/** The answer to a CORS preflight: 204, no body. */
export function preflight(origin: string | undefined): ApiResponse {
  return withCors(
    {
      status: 204,
      headers: {
        "access-control-allow-methods": ALLOWED_METHODS,
        "access-control-allow-headers": ALLOWED_HEADERS,
        "access-control-max-age": "600",
      },
      body: "",
    },
    origin,
  );
}
