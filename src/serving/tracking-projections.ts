import { ANALYTICS_PROJECTION } from "../analytics/analytics-projection.js";
import { SURVEY_PROJECTION } from "../surveys/survey-projection.js";
import { ROLLOUT_PROJECTION } from "../management/rollouts/exposure-projection.js";
import type { TrackingProjections } from "../tracking/projections.js";

/** What every projection of tracking derives from it: analytics cells, survey state and rollout exposures. */
export const TRACKING_PROJECTIONS: TrackingProjections = { analytics: ANALYTICS_PROJECTION, surveys: SURVEY_PROJECTION, rollouts: ROLLOUT_PROJECTION };
