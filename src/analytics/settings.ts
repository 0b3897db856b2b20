import * as v from "valibot";
import type { KvStore } from "../storage/kv.js";
import { settingsKey } from "./keys.js";

/** Per-environment analytics settings. */
export interface AnalyticsSettings {
  /** N: a company that used a feature on at least this many distinct days of a window adopted it. */
  retentionDays: number;
}

export const DEFAULT_ANALYTICS_SETTINGS: Readonly<AnalyticsSettings> = Object.freeze({ retentionDays: 2 });

/** **decided**: N is 1..366 (a window may be longer; a larger N would make adoption a matter of window length). */
export const MAX_RETENTION_DAYS = 366;

/** `PUT /admin/environments/:envId/analytics/settings` body. */
export const PutAnalyticsSettingsBody = v.strictObject(
  {
    retentionDays: v.pipe(
      v.number("must be a number"),
      v.integer("must be an integer"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(MAX_RETENTION_DAYS, `must be at most ${MAX_RETENTION_DAYS}`),
    ),
  },
  "must be an object with only: retentionDays",
);

/** The environment's settings, defaults filled in. */
export function getAnalyticsSettings(store: KvStore, environmentId: string): AnalyticsSettings {
  const stored = store.table<"aggregates", Partial<AnalyticsSettings>>("aggregates").get(settingsKey(environmentId));
  return { ...DEFAULT_ANALYTICS_SETTINGS, ...stored };
}

/** Replaces the environment's settings; resolves once committed (tests and tools; the service goes through src/management). */
export async function putAnalyticsSettings(store: KvStore, environmentId: string, settings: AnalyticsSettings): Promise<AnalyticsSettings> {
  return store.write(() => writeAnalyticsSettings(store, environmentId, settings));
}

/** Inside a write: replaces the environment's settings. */
export function writeAnalyticsSettings(store: KvStore, environmentId: string, settings: AnalyticsSettings): AnalyticsSettings {
  const stored: AnalyticsSettings = { retentionDays: settings.retentionDays };
  store.table<"aggregates", AnalyticsSettings>("aggregates").put(settingsKey(environmentId), stored);
  return stored;
}
