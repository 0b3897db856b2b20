import { ANALYTICS_PROJECTION } from "../analytics/projection.js";
import { SURVEY_PROJECTION } from "../surveys/projection.js";
import { registerTrackingProjection } from "../tracking/projections.js";

/**
 * What every thread that writes tracking derives from it: analytics cells and survey state. Called by
 * createJobContext, which every such thread (main, worker, cluster node) calls before it writes.
 */
export function registerTrackingProjections(): void {
  registerTrackingProjection(ANALYTICS_PROJECTION);
  registerTrackingProjection(SURVEY_PROJECTION);
}
