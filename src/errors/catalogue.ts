/**
 * The one error catalogue: every stable code the service answers with, its HTTP status and a default message.
 * Errors cross thread boundaries as plain `{code, message, details}` objects and are matched by code only.
 */
export const ERRORS = {
  INVALID_REQUEST: { status: 400, message: "The request is invalid." },
  INVALID_BODY: { status: 400, message: "The request body is invalid." },
  MALFORMED_JSON: { status: 400, message: "The request body is not valid JSON." },
  UNSUPPORTED_CONTENT_TYPE: { status: 400, message: "The request body must be sent as Content-Type: application/json." },
  INVALID_QUERY: { status: 400, message: "The query string is invalid." },
  INVALID_RULES: { status: 400, message: "The rule tree is invalid." },
  INVALID_DOCUMENT: { status: 400, message: "The flags document is invalid." },
  INVALID_WEBHOOK_URL: { status: 400, message: "The webhook URL is not allowed: it must reach a public address (or one SWITCHYARD_WEBHOOK_ALLOW lists)." },
  UNKNOWN_FEATURE: { status: 400, message: "The request names a feature that does not exist." },
  UNAUTHORIZED: { status: 401, message: "A valid key is required." },
  INVALID_CREDENTIALS: { status: 401, message: "The email or password is not valid." },
  FORBIDDEN: { status: 403, message: "This credential cannot be used on this endpoint." },
  CSRF_REJECTED: { status: 403, message: "The request failed the cross-site request checks." },
  NOT_FOUND: { status: 404, message: "Not found." },
  ROUTE_NOT_FOUND: { status: 404, message: "No such route." },
  CONFLICT: { status: 409, message: "The request conflicts with the current state." },
  APPROVAL_REQUIRED: { status: 409, message: "This environment requires approval: propose a change request." },
  PAYLOAD_TOO_LARGE: { status: 413, message: "The request body is over the limit." },
  URI_TOO_LONG: { status: 414, message: "The request URL is over the limit." },
  RATE_LIMITED: { status: 429, message: "Too many requests; retry later." },
  OVERLOADED: { status: 503, message: "The service is busy; retry later." },
  SHUTTING_DOWN: { status: 503, message: "The service is shutting down; retry later." },
  PROJECTION_BEHIND: { status: 503, message: "Tracking is further ahead of what is projected from it than this service allows; retry later." },
  CLUSTER_UNAVAILABLE: { status: 503, message: "This node cannot reach the cluster's log; retry later (another node may answer)." },
  UPSTREAM_UNAVAILABLE: { status: 502, message: "The server imported from did not answer usably." },
  INTERNAL: { status: 500, message: "Internal server error." },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** One field-level problem, with a dotted path into the request (e.g. `events.3.userId`). */
export interface ValidationIssue {
  path: string;
  message: string;
}

/** The serialisable shape errors take across threads and in responses. */
export interface ErrorData {
  code: ErrorCode;
  message: string;
  validationErrors?: ValidationIssue[];
  retryAfterSeconds?: number;
}

/** An error the service answers with on purpose; anything else thrown is a genuine fault (500). */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly validationErrors: ValidationIssue[] | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message?: string, validationErrors?: ValidationIssue[], retryAfterSeconds?: number) {
    super(message ?? ERRORS[code].message);
    this.name = "ServiceError";
    this.code = code;
    this.validationErrors = validationErrors;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  get status(): number {
    return ERRORS[this.code].status;
  }

  toData(): ErrorData {
    const data: ErrorData = { code: this.code, message: this.message };
    if (this.validationErrors) data.validationErrors = this.validationErrors;
    if (this.retryAfterSeconds !== undefined) data.retryAfterSeconds = this.retryAfterSeconds;
    return data;
  }

  static fromData(data: ErrorData): ServiceError {
    return new ServiceError(data.code, data.message, data.validationErrors, data.retryAfterSeconds);
  }
}

export function isErrorData(value: unknown): value is ErrorData {
  return (
    typeof value === "object" && value !== null && typeof (value as { code?: unknown }).code === "string" &&
    (value as { code: string }).code in ERRORS
  );
}
