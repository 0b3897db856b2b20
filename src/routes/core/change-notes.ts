/**
 * What any management write may say about itself (API.md §15): a `comment` (≤ 500 characters) for history and audit,
 * and an owner's `bypass=true` with a `reason` where the environment requires approval. Read from the query or the
 * JSON body, so every write route takes them alike; the approval check itself runs when the change applies.
 */
import * as v from "valibot";
import type { ApiRequest } from "../../http/types.js";
import { ServiceError } from "../../errors/catalogue.js";
import { toValidationIssues } from "../../schemas/issues.js";
import { findLoneSurrogate } from "../../schemas/well-formed.js";

export const MAX_COMMENT_LENGTH = 500;

const Notes = v.object({
  comment: v.optional(v.pipe(v.string("comment must be a string"), v.maxLength(MAX_COMMENT_LENGTH, `comment must be at most ${MAX_COMMENT_LENGTH} characters`))),
  bypass: v.optional(v.union([v.boolean(), v.picklist(["true", "false"])], "bypass must be true or false")),
  reason: v.optional(v.pipe(v.string("reason must be a string"), v.trim(), v.minLength(1, "reason must not be empty"), v.maxLength(MAX_COMMENT_LENGTH, `reason must be at most ${MAX_COMMENT_LENGTH} characters`))),
});

export interface ChangeNotes {
  comment?: string;
  bypass?: { reason: string };
}

/** The body's top-level fields when it is a JSON object; nothing otherwise (the route's own parsing answers for it). */
function bodyFields(request: ApiRequest): Record<string, unknown> {
  if (!request.body || request.body.length === 0) return {};
  try {
    const parsed: unknown = JSON.parse(request.body.toString("utf8"));
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function changeNotesOf(request: ApiRequest): ChangeNotes {
  const query = new URLSearchParams(request.query);
  const body = bodyFields(request);
  const pick = (name: string) => (body[name] !== undefined ? body[name] : (query.get(name) ?? undefined));
  const parsed = v.safeParse(Notes, { comment: pick("comment"), bypass: pick("bypass"), reason: pick("reason") });
  if (!parsed.success) throw new ServiceError("INVALID_REQUEST", undefined, toValidationIssues(parsed.issues));
  const { comment, bypass, reason } = parsed.output;
  // Strings must be well-formed Unicode (API.md §2), here as in every body the route parses itself.
  const illFormed = findLoneSurrogate({ comment, reason });
  if (illFormed) throw new ServiceError("INVALID_REQUEST", undefined, [illFormed]);
  const bypassing = bypass === true || bypass === "true";
  if (bypassing && reason === undefined) throw new ServiceError("INVALID_REQUEST", "bypass needs a reason.", [{ path: "reason", message: "a bypass needs a reason" }]);
  return { ...(comment !== undefined ? { comment } : {}), ...(bypassing ? { bypass: { reason: reason! } } : {}) };
}
