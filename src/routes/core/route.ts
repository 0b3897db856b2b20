import type { Permission } from "../../accounts/roles.js";
import type { Access, Principal } from "./auth.js";
import type { ApiRequest, ApiResponse, StreamResponse } from "../../http/types.js";
import type { ServiceError } from "../../errors/catalogue.js";

/** Body limits of API.md §2. */
export const BODY_LIMITS = {
  none: 0,
  single: 64 * 1024,
  bulk: 2 * 1024 * 1024,
  admin: 1024 * 1024,
} as const;

export interface RouteContext<S> {
  request: ApiRequest;
  params: Record<string, string>;
  principal: Principal;
  services: S;
}

export type RouteResult = ApiResponse | StreamResponse;

export interface RouteSpec<S> {
  access: Access;
  /** For `admin` routes: what the caller's role must allow (the one role table, src/accounts/roles.ts). */
  permission?: Permission;
  bodyLimit: number;
  /** Front-facing routes answer browsers: CORS headers and preflights. */
  cors: boolean;
  /**
   * Reads what is projected from tracking (users, companies, analytics, survey state), so waits for what was
   * acknowledged before it (API.md §4). Management (`admin`) routes always do.
   */
  readsProjection?: boolean;
  /** The key may also come as `X-API-Key` (header-authenticated like a Bearer token). */
  acceptsApiKeyHeader?: boolean;
  /** The error body of a protocol of its own (OFREP) instead of the envelope of API.md §2; same statuses. */
  renderError?(error: ServiceError, params: Record<string, string>): ApiResponse;
  handle(context: RouteContext<S>): Promise<RouteResult> | RouteResult;
}

/**
 * The principal's app and environment, for routes whose access admits only environment keys (authentication answers
 * a credential of the wrong kind with its 403 before the handler runs). Any other principal here is a route table
 * mistake: it throws a plain Error, which the core answers with a logged 500.
 */
export function environmentOf(principal: Principal): { appId: string; environmentId: string } {
  if (!("environmentId" in principal)) throw new Error("route misconfigured: no environment principal");
  return { appId: principal.appId, environmentId: principal.environmentId };
}

/** A management route: a management credential whose role allows `permission`; no CORS (the dashboard is same-origin). */
export function managementRoute<S>(permission: Permission, bodyLimit: number, handle: RouteSpec<S>["handle"]): RouteSpec<S> {
  return { access: "admin", permission, bodyLimit, cors: false, handle };
}
