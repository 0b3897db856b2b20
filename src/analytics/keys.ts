/**
 * Where the analytics aggregates live in the `aggregates` table, and what they hold. Every key starts with the
 * environment id; cells are keyed day-first (`…␀<day>␀<companyId>`) so that a window is one contiguous key range
 * per event name or feature, and a page of companies is one contiguous range per day.
 *
 * - usage        `env␀u␀<eventName>␀<day>␀<companyId>`  → UsageCell
 * - satisfaction `env␀s␀<featureKey>␀<day>␀<companyId>` → SatisfactionCell (companyId "" for "no company")
 * - exposure     `env␀x␀<featureKey>␀<day>␀<companyId>` → ExposureCell
 * - feedback     `env␀f␀<feedbackId>`                    → FeedbackContribution (what a feedback adds now)
 * - user usage   `env␀p␀<userId>␀<eventName>`            → UserUsageCell (feedback surveys: who used what)
 * - settings     `env␀settings`                          → AnalyticsSettings (not an aggregate: rebuild keeps it)
 *
 * A cell exists only while its count is positive, so incremental maintenance and a rebuild leave identical tables.
 */
import { key, prefixRange } from "../storage/kv.js";

export const DAY_MS = 86_400_000;
/**
 * Day numbers count UTC days from the epoch. `Date` spans ±1e8 days, so shifting by 1e8 makes every representable
 * day a non-negative number of at most 9 digits, which sorts as text in numeric order.
 */
const DAY_OFFSET = 100_000_000;
const DAY_PART_LENGTH = 9;

/** The kinds of aggregate, by their key part. */
export const AGGREGATE_KINDS = { usage: "u", satisfaction: "s", exposure: "x", feedback: "f", userUsage: "p" } as const;
export type CellKind = "u" | "s" | "x";

/** Stands for "no company" in satisfaction cells; company ids are never empty. */
export const NO_COMPANY = "";

/** [events that day, latest event time that day in epoch ms]. */
export type UsageCell = [count: number, lastAt: number];
/** [events of one user with one name, earliest event time in epoch ms]: whether a user qualifies for a survey. */
export type UserUsageCell = [count: number, firstAt: number];
/** [scored feedback whose time is that day, sum of their scores]. */
export type SatisfactionCell = [count: number, sum: number];
/**
 * Present (1) when at least one `evaluate`/`check` event with a true result was received that day. Queries only ask
 * whether a company was exposed, and a marker, unlike a count, needs no write once set: `/features/enabled` records an
 * event per enabled feature on every call, and counting them cost a read and a write per event.
 */
export type ExposureCell = 1;

/** What one feedback contributes to the satisfaction cells, kept so that an update can take it back. */
export interface FeedbackContribution {
  key: string;
  companyId: string | null;
  day: number;
  score: number | null;
}

/** The UTC day of an epoch-millisecond time. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

export function dayKeyPart(day: number): string {
  return String(day + DAY_OFFSET).padStart(DAY_PART_LENGTH, "0");
}

/** Names become key parts: one holding the separator could alias another name's cells, so it is never aggregated. */
export function isAggregatableName(name: string): boolean {
  return name.length > 0 && !name.includes("\u0000");
}

/** The key of one cell. */
export function cellKey(environmentId: string, kind: CellKind, subject: string, day: number, companyId: string): string {
  return key(environmentId, kind, subject, dayKeyPart(day), companyId);
}

/** The common start of every cell key of one subject (event name or feature key), separator included. */
export function cellPrefix(environmentId: string, kind: CellKind, subject: string): string {
  return prefixRange(environmentId, kind, subject).start;
}

/** The key of the first cell of `day` (for any company), given the subject's prefix. */
export function dayStart(prefix: string, day: number): string {
  return prefix + dayKeyPart(day);
}

/** Splits a cell key (known to start with `prefix`) into its day and company. */
export function parseCellKey(prefix: string, cellKeyText: string): { day: number; companyId: string } {
  const dayPart = cellKeyText.slice(prefix.length, prefix.length + DAY_PART_LENGTH);
  return { day: Number(dayPart) - DAY_OFFSET, companyId: cellKeyText.slice(prefix.length + DAY_PART_LENGTH + 1) };
}

export function feedbackContributionKey(environmentId: string, feedbackId: string): string {
  return key(environmentId, AGGREGATE_KINDS.feedback, feedbackId);
}

export function userUsageKey(environmentId: string, userId: string, eventName: string): string {
  return key(environmentId, AGGREGATE_KINDS.userUsage, userId, eventName);
}

export function settingsKey(environmentId: string): string {
  return key(environmentId, "settings");
}

/** The key ranges holding an environment's aggregates (settings excluded). */
export function aggregateRanges(environmentId: string): { start: string; end: string }[] {
  return Object.values(AGGREGATE_KINDS).map((kind) => prefixRange(environmentId, kind));
}

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    /** Cells of several kinds (usage, exposure, scores, settings), each read by its key's shape (this file). */
    aggregates: unknown;
  }
}
