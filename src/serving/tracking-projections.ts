import { ANALYTICS_PROJECTION } from "../analytics/analytics-projection.js";
import { SURVEY_PROJECTION } from "../surveys/survey-projection.js";
import { ROLLOUT_PROJECTION } from "../management/rollouts/exposure-projection.js";
import type { TrackingProjections } from "../tracking/projections.js";
import { WEBHOOK_PROJECTION } from "../management/webhooks/feedback-projection.js";

/** What every projection of tracking derives from it: analytics cells, survey state, rollout exposures, and feedback's webhook deliveries. */
export const TRACKING_PROJECTIONS: TrackingProjections = { analytics: ANALYTICS_PROJECTION, surveys: SURVEY_PROJECTION, rollouts: ROLLOUT_PROJECTION, webhooks: WEBHOOK_PROJECTION };
