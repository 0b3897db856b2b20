import type { ApiRequest } from "../../http/types.js";
import { ServiceError } from "../../errors/catalogue.js";
import { sameSecret } from "../../accounts/secrets.js";

export const CSRF_HEADER = "x-csrf-token";

/**
 * The `Origin` check of API.md §8: when a request carries an Origin, it must be the service's own — the configured
 * public origin, or else an origin whose host is the request's own `Host`. `Origin: null` (sandboxed frames,
 * some redirects) is refused.
 */
export function checkOrigin(request: ApiRequest, publicOrigin: string | undefined): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  if (!isOwnOrigin(origin, request.headers.host, publicOrigin)) {
    throw new ServiceError("CSRF_REJECTED", "The request comes from another origin.");
  }
}

function isOwnOrigin(origin: string, host: string | undefined, publicOrigin: string | undefined): boolean {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.origin === "null") return false;
  if (publicOrigin !== undefined) return parsed.origin === publicOrigin;
  return host !== undefined && parsed.host === host.toLowerCase();
}

/** A session's state-changing request must echo the session's CSRF token in `x-csrf-token`. */
export function checkCsrfToken(request: ApiRequest, expected: string): void {
  const presented = request.headers[CSRF_HEADER];
  if (presented === undefined || !sameSecret(presented, expected)) {
    throw new ServiceError("CSRF_REJECTED", "A signed-in browser must send the session's CSRF token as `x-csrf-token`.");
  }
}

/** Whether the session cookie should carry `Secure`: the public origin is https, or a TLS proxy says so. */
export function behindTls(request: ApiRequest, publicOrigin: string | undefined): boolean {
  if (publicOrigin !== undefined) return publicOrigin.startsWith("https:");
  return request.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase() === "https";
}
