import { ERRORS, ServiceError, type ErrorCode } from "../errors/catalogue.js";
import type { ApiResponse } from "./types.js";

const JSON_HEADERS = { "content-type": "application/json" } as const;

/** A success answer: `{"success": true, ...fields}`. */
export function ok(fields: Record<string, unknown> = {}, status = 200): ApiResponse {
  return { status, headers: { ...JSON_HEADERS }, body: JSON.stringify({ success: true, ...fields }) };
}

/** A success answer whose JSON text is already built (hot paths assemble it from prepared fragments). */
export function okText(json: string, extraHeaders?: Record<string, string>): ApiResponse {
  return { status: 200, headers: extraHeaders ? { ...JSON_HEADERS, ...extraHeaders } : { ...JSON_HEADERS }, body: json };
}

/** The same answer with more headers (a cookie, `cache-control`). */
export function withHeaders(response: ApiResponse, headers: Record<string, string>): ApiResponse {
  return { ...response, headers: { ...response.headers, ...headers } };
}

/** The error envelope of API.md §2 for a ServiceError. */
export function errorResponse(error: ServiceError): ApiResponse {
  const body: Record<string, unknown> = { code: error.code, message: error.message };
  if (error.validationErrors) body.validationErrors = error.validationErrors;
  const headers: Record<string, string> = { ...JSON_HEADERS };
  if (error.retryAfterSeconds !== undefined) headers["retry-after"] = String(error.retryAfterSeconds);
  return { status: ERRORS[error.code].status, headers, body: JSON.stringify({ success: false, error: body }) };
}

export function errorFor(code: ErrorCode, message?: string): ApiResponse {
  return errorResponse(new ServiceError(code, message));
}
