/** Answers in OAuth's own shapes (RFC 6749 §5.2, RFC 7591 §3.2.2): editors' OAuth clients read these, not our envelope. */
import type { ApiResponse } from "../../../http/types.js";

const HEADERS = { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" } as const;

export function oauthJson(status: number, body: Record<string, unknown>): ApiResponse {
  return { status, headers: { ...HEADERS }, body: JSON.stringify(body) };
}

export function oauthError(status: number, error: string, description: string): ApiResponse {
  return oauthJson(status, { error, error_description: description });
}

/** Form parameters (`application/x-www-form-urlencoded`), or undefined when the body is of another type. */
export function formParams(body: Buffer | null, contentType: string | undefined): URLSearchParams | undefined {
  if (!contentType || contentType.split(";")[0]!.trim().toLowerCase() !== "application/x-www-form-urlencoded") return undefined;
  return new URLSearchParams(body ? body.toString("utf8") : "");
}
