import { behindTls } from "../core/csrf.js";
import type { ApiRequest } from "../../http/types.js";

/**
 * The service's own origin as clients reach it: SWITCHYARD_PUBLIC_URL when set, else the request's Host (https when a
 * TLS proxy says so). OAuth metadata and the resource URL are built from it, so they name what the editor dialled.
 */
export function serviceOrigin(request: ApiRequest, publicOrigin: string | undefined): string {
  if (publicOrigin !== undefined) return publicOrigin;
  return `${behindTls(request, undefined) ? "https" : "http"}://${request.headers.host ?? "localhost"}`;
}

/** The MCP endpoint's path; API.md §12. */
export const MCP_PATH = "/api/mcp";
/** RFC 9728 metadata of the MCP endpoint, at its path-aware address. */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";
