import { ANALYTICS_PROJECTION } from "../analytics/analytics-projection.js";
import { SURVEY_PROJECTION } from "../surveys/survey-projection.js";
import type { TrackingProjections } from "../tracking/projections.js";
import { WEBHOOK_PROJECTION } from "../management/webhooks/feedback-projection.js";

/** What every projection of tracking derives from it: analytics cells, survey state, and feedback's webhook deliveries. */
export const TRACKING_PROJECTIONS: TrackingProjections = { analytics: ANALYTICS_PROJECTION, surveys: SURVEY_PROJECTION, webhooks: WEBHOOK_PROJECTION };
