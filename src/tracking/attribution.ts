/**
 * Which company a feature event counts for (API.md §4 association, applied to evaluation contexts). Decided once,
 * at ingestion, and stored on the record as `countsForCompanyId`, like events: the user's "latest company" moves
 * later, and a rebuild from the logs must attribute exactly as ingestion did.
 */
import type { FeatureEventAction } from "../schemas/tracking-fields.js";

/** The actions whose true result exposes a company to a feature (a true `evaluate` or `check` feature event, docs/ANALYTICS.md). */
export const EXPOSURE_ACTIONS: ReadonlySet<FeatureEventAction> = new Set(["evaluate", "check"]);

/** Whether a feature event shows the feature was on for whoever it was evaluated for. */
export function isExposure(action: FeatureEventAction, evalResult: unknown): boolean {
  return evalResult === true && EXPOSURE_ACTIONS.has(action);
}

/**
 * The company of an evaluation context: `company.id` (nested or already flattened), else the latest company of
 * `user.id`, else null. Ids may be strings or numbers, as in tracking calls.
 */
export function featureEventCompany(
  evalContext: Record<string, unknown> | null | undefined,
  latestCompanyOf: (userId: string) => string | null,
): string | null {
  if (!evalContext) return null;
  const companyId = contextId(evalContext, "company");
  if (companyId !== undefined) return companyId;
  const userId = contextId(evalContext, "user");
  return userId === undefined ? null : latestCompanyOf(userId);
}

function contextId(context: Record<string, unknown>, entity: "user" | "company"): string | undefined {
  const nested = Object.hasOwn(context, entity) ? context[entity] : undefined;
  const nestedId = typeof nested === "object" && nested !== null && Object.hasOwn(nested, "id") ? (nested as { id: unknown }).id : undefined;
  return asId(nestedId) ?? asId(context[`${entity}.id`]);
}

function asId(value: unknown): string | undefined {
  if (typeof value === "string") return value !== "" && !value.includes("\u0000") ? value : undefined;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}
