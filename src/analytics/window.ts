import { ServiceError, type ValidationIssue } from "../errors/catalogue.js";
import { parseIsoDateTime } from "../schemas/tracking-fields.js";
import { DAY_MS, dayOf } from "./keys.js";

/** The window a query asks about when it names none: the 30 UTC days up to and including today. */
export const DEFAULT_WINDOW_DAYS = 30;
/** **decided**: longer windows are refused; a per-company query reads one cell per day, event name and feature. */
export const MAX_WINDOW_DAYS = 3660;

/**
 * A query window `[from, to)` of whole UTC days (epoch ms), with the days it covers and the start of its last
 * quarter, `to − (to − from) / 4`, which separates retained from churned.
 */
export interface AnalyticsWindow {
  from: number;
  to: number;
  fromDay: number;
  /** Exclusive. */
  toDay: number;
  lastQuarterFrom: number;
}

/** The window of whole days `[fromDay, toDay)`. */
export function windowOfDays(fromDay: number, toDay: number): AnalyticsWindow {
  const from = fromDay * DAY_MS;
  const to = toDay * DAY_MS;
  return { from, to, fromDay, toDay, lastQuarterFrom: to - (to - from) / 4 };
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Epoch ms of an ISO 8601 date-time or date (a date is its UTC midnight), or NaN. */
function parseInstant(text: string): number {
  return parseIsoDateTime(DATE_ONLY.test(text) ? `${text}T00:00:00Z` : text);
}

/**
 * The window of a query's `from` and `to` (ISO 8601; either may be absent). Defaults: `to` is the end of today
 * (UTC), `from` is DEFAULT_WINDOW_DAYS days before `to`. Aggregates are per UTC day, so the window is widened to
 * whole days: `from` down to its midnight, `to` up to the next one. Throws INVALID_QUERY for a bad date, for
 * `from ≥ to` (as given) and for a window over MAX_WINDOW_DAYS days.
 */
export function resolveWindow(fromText: string | null | undefined, toText: string | null | undefined, now: number): AnalyticsWindow {
  const issues: ValidationIssue[] = [];
  const from = fromText ? parseInstant(fromText) : undefined;
  const to = toText ? parseInstant(toText) : undefined;
  if (from !== undefined && Number.isNaN(from)) issues.push({ path: "from", message: "must be an ISO 8601 date or date-time" });
  if (to !== undefined && Number.isNaN(to)) issues.push({ path: "to", message: "must be an ISO 8601 date or date-time" });
  if (issues.length > 0) throw new ServiceError("INVALID_QUERY", "`from` and `to` must be ISO 8601 dates.", issues);
  const toDay = to === undefined ? dayOf(now) + 1 : Math.ceil(to / DAY_MS);
  const fromDay = from === undefined ? toDay - DEFAULT_WINDOW_DAYS : dayOf(from);
  if ((from !== undefined && to !== undefined && from >= to) || fromDay >= toDay) {
    throw new ServiceError("INVALID_QUERY", "`from` must be before `to`.", [{ path: "from", message: "must be before to" }]);
  }
  if (toDay - fromDay > MAX_WINDOW_DAYS) {
    throw new ServiceError("INVALID_QUERY", `The window is longer than ${MAX_WINDOW_DAYS} days.`, [
      { path: "from", message: `must be at most ${MAX_WINDOW_DAYS} days before to` },
    ]);
  }
  return windowOfDays(fromDay, toDay);
}
