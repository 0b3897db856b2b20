import { ServiceError } from "../errors/catalogue.js";
import type { KeyKind } from "../tenancy/identifiers.js";
import { matchesDigest, type KeyIndex } from "../tenancy/key-index.js";
import type { ApiRequest } from "./types.js";

/**
 * Who may call a route: `public` anyone; `admin` the admin token; `secret` an environment's secret key;
 * `environment` its publishable or secret key; `tracking-path` the app's tracking key in the `trackingKey` param.
 */
export type Access = "public" | "admin" | "secret" | "environment" | "tracking-path";

export type Principal =
  | { kind: "anonymous" }
  | { kind: "admin" }
  | { kind: KeyKind; appId: string; environmentId: string };

export interface AuthContext {
  keys: KeyIndex;
  adminTokenDigest: string;
}

const ANONYMOUS: Principal = { kind: "anonymous" };
const ADMIN: Principal = { kind: "admin" };

function bearerToken(request: ApiRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : undefined;
}

/** `publishableKey` from the raw query, without parsing the rest. */
function publishableKeyFromQuery(query: string): string | undefined {
  if (!query.includes("publishableKey=")) return undefined;
  const value = new URLSearchParams(query).get("publishableKey");
  return value || undefined;
}

/** Decides who is calling, or throws 401 (no or unknown credential) / 403 (a credential of the wrong kind). */
export function authenticate(context: AuthContext, request: ApiRequest, access: Access, params: Record<string, string>): Principal {
  switch (access) {
    case "public":
      return ANONYMOUS;
    case "admin": {
      const token = bearerToken(request);
      if (!token) throw new ServiceError("UNAUTHORIZED", "The admin token is required as `Authorization: Bearer <token>`.");
      if (matchesDigest(token, context.adminTokenDigest)) return ADMIN;
      if (context.keys.resolve(token)) throw new ServiceError("FORBIDDEN", "Environment and tracking keys cannot use the management API.");
      throw new ServiceError("UNAUTHORIZED", "The admin token is not valid.");
    }
    case "tracking-path": {
      const resolved = context.keys.resolve(params.trackingKey ?? "");
      if (!resolved) throw new ServiceError("UNAUTHORIZED", "The tracking key in the path is not valid.");
      if (resolved.kind !== "tracking") throw new ServiceError("FORBIDDEN", "Only a tracking key may appear in a tracking-API path.");
      return { kind: "tracking", appId: resolved.appId, environmentId: resolved.environmentId };
    }
    case "secret":
    case "environment": {
      const header = bearerToken(request);
      // Browsers send the publishable key in the query to avoid a CORS preflight; a secret key only ever in the header.
      const presented = header ?? publishableKeyFromQuery(request.query);
      if (!presented) throw new ServiceError("UNAUTHORIZED", "A key is required as `Authorization: Bearer <key>` or the `publishableKey` query parameter.");
      const resolved = context.keys.resolve(presented);
      if (!resolved) {
        if (matchesDigest(presented, context.adminTokenDigest)) throw new ServiceError("FORBIDDEN", "The admin token cannot use the front-facing API.");
        throw new ServiceError("UNAUTHORIZED", "The key is not valid.");
      }
      if (resolved.kind === "tracking") throw new ServiceError("FORBIDDEN", "A tracking key is only valid in the tracking-API path.");
      if (resolved.kind === "secret" && header === undefined) throw new ServiceError("FORBIDDEN", "A secret key must be sent in the Authorization header.");
      if (access === "secret" && resolved.kind !== "secret") throw new ServiceError("FORBIDDEN", "This endpoint needs a secret key.");
      return { kind: resolved.kind, appId: resolved.appId, environmentId: resolved.environmentId };
    }
  }
}
