/** Where the MCP OAuth flow lives (under the MCP endpoint's own path, so no other part of `/api` is claimed). */
import { MCP_PATH } from "../service-origin.js";

export const OAUTH_PATHS = {
  register: `${MCP_PATH}/oauth/register`,
  authorize: `${MCP_PATH}/oauth/authorize`,
  token: `${MCP_PATH}/oauth/token`,
} as const;

export const AUTHORIZATION_SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server";

/** How long a member's approval (the authorization code) may wait for the editor to redeem it. */
export const CODE_LIFETIME_MS = 60_000;
