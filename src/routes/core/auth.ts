import type { ManagementPrincipal } from "../../accounts/principal.js";
import { authorize } from "../../accounts/permissions.js";
import type { Permission } from "../../accounts/roles.js";
import { ServiceError } from "../../errors/catalogue.js";
import type { KeyKind } from "../../tenancy/identifiers.js";
import type { KeyIndex } from "../../tenancy/key-index.js";
import type { ApiRequest } from "../../http/types.js";

/**
 * Who may call a route: `public` anyone; `admin` a management credential (admin token, member session, API token)
 * whose role allows the route's permission; `secret` an environment's secret key; `environment` its publishable or
 * secret key; `tracking-path` the app's tracking key in the `trackingKey` param.
 */
export type Access = "public" | "admin" | "secret" | "environment" | "tracking-path";

export type Principal =
  | { kind: "anonymous" }
  | ManagementPrincipal
  | { kind: KeyKind; appId: string; environmentId: string };

/** The accounts room's answer to "who is this management credential?" (`src/routes/core/credentials.ts`). */
export interface ManagementCredentials {
  /** The principal of a management request, or throws 401 (none, unknown, expired) / 403 (wrong kind, CSRF). */
  authenticate(request: ApiRequest): ManagementPrincipal;
  /** Whether a secret is the admin token or an API token: such a credential on the front API is a 403, not a 401. */
  isManagementCredential(secret: string): boolean;
}

export interface AuthContext {
  keys: KeyIndex;
  management: ManagementCredentials;
}

const ANONYMOUS: Principal = { kind: "anonymous" };

/** The credential of an `Authorization: Bearer` header. */
export function bearerToken(request: ApiRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}

/** The credential of an `X-API-Key` header (OpenFeature's OFREP providers send keys there). */
function apiKeyHeader(request: ApiRequest): string | undefined {
  const value = request.headers["x-api-key"]?.trim();
  return value || undefined;
}

/** `publishableKey` from the raw query, without parsing the rest. */
function publishableKeyFromQuery(query: string): string | undefined {
  if (!query.includes("publishableKey=")) return undefined;
  const value = new URLSearchParams(query).get("publishableKey");
  return value || undefined;
}

/**
 * Decides who is calling, or throws 401 (no or unknown credential) / 403 (a credential of the wrong kind, a role
 * without the route's `permission`, a failed CSRF check). Management routes ask the accounts room and then the one
 * role table (`src/accounts/roles.ts`); the front-facing cases below touch neither.
 */
export function authenticate(
  context: AuthContext,
  request: ApiRequest,
  access: Access,
  params: Record<string, string>,
  permission?: Permission,
  acceptsApiKeyHeader = false,
): Principal {
  switch (access) {
    case "public":
      return ANONYMOUS;
    case "admin": {
      const principal = context.management.authenticate(request);
      if (permission === undefined) throw new Error("route misconfigured: a management route without a permission");
      authorize(principal, permission, request.method);
      return principal;
    }
    case "tracking-path": {
      const resolved = context.keys.resolve(params.trackingKey ?? "");
      if (!resolved) throw new ServiceError("UNAUTHORIZED", "The tracking key in the path is not valid.");
      if (resolved.kind !== "tracking") throw new ServiceError("FORBIDDEN", "Only a tracking key may appear in a tracking-API path.");
      return { kind: "tracking", appId: resolved.appId, environmentId: resolved.environmentId };
    }
    case "secret":
    case "environment": {
      const header = bearerToken(request) ?? (acceptsApiKeyHeader ? apiKeyHeader(request) : undefined);
      // Browsers send the publishable key in the query to avoid a CORS preflight; a secret key only ever in the header.
      const presented = header ?? publishableKeyFromQuery(request.query);
      if (!presented) throw new ServiceError("UNAUTHORIZED", "A key is required as `Authorization: Bearer <key>` or the `publishableKey` query parameter.");
      const resolved = context.keys.resolve(presented);
      if (!resolved) {
        if (context.management.isManagementCredential(presented)) throw new ServiceError("FORBIDDEN", "Management credentials cannot use the front-facing API.");
        throw new ServiceError("UNAUTHORIZED", "The key is not valid.");
      }
      if (resolved.kind === "tracking") throw new ServiceError("FORBIDDEN", "A tracking key is only valid in the tracking-API path.");
      if (resolved.kind === "secret" && header === undefined) throw new ServiceError("FORBIDDEN", "A secret key must be sent in the Authorization header.");
      if (access === "secret" && resolved.kind !== "secret") throw new ServiceError("FORBIDDEN", "This endpoint needs a secret key.");
      return { kind: resolved.kind, appId: resolved.appId, environmentId: resolved.environmentId };
    }
  }
}
