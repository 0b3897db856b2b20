/** Company-level adoption, satisfaction and exposure of features (docs/ANALYTICS.md). */
export { AggregateWriter } from "./aggregate-writer.js";
export { featureEventCompany, isExposure } from "../tracking/attribution.js";
export { AnalyticsQueries, usageNames, type CompanyFeatureRow, type FeatureCompanyRow, type FeatureSummary } from "./queries.js";
export { rebuildAggregates, type RebuildReport } from "./rebuild.js";
export { DEFAULT_ANALYTICS_SETTINGS, getAnalyticsSettings, putAnalyticsSettings, type AnalyticsSettings } from "./settings.js";
export { adoptionState, type AdoptionState } from "./states.js";
export { resolveWindow, windowOfDays, type AnalyticsWindow } from "./window.js";
