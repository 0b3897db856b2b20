import type { AnalyticsWindow } from "./window.js";

/** A company's relation to a feature over a window (docs/ANALYTICS.md). */
export type AdoptionState = "none" | "tried" | "retained" | "churned";

/** How a company used a feature in a window: distinct UTC days with usage, and the latest usage time. */
export interface WindowUsage {
  usageDays: number;
  lastUsedAt: number | null;
}

export const NO_USAGE: WindowUsage = Object.freeze({ usageDays: 0, lastUsedAt: null });

/**
 * none: no usage in the window; tried: usage on fewer than `retentionDays` distinct days; retained: on at least that
 * many days, one of them at or after the start of the window's last quarter; churned: that many days, none there.
 */
export function adoptionState(usage: WindowUsage, retentionDays: number, window: AnalyticsWindow): AdoptionState {
  if (usage.usageDays === 0 || usage.lastUsedAt === null) return "none";
  if (usage.usageDays < retentionDays) return "tried";
  return usage.lastUsedAt >= window.lastQuarterFrom ? "retained" : "churned";
}

/** `{count, average}` of scores; average null when nothing was scored. */
export interface Satisfaction {
  count: number;
  average: number | null;
}

export function satisfactionOf(count: number, sum: number): Satisfaction {
  return { count, average: count === 0 ? null : sum / count };
}
