import type { TrackingProjection } from "../tracking/projections.js";
import { AggregateWriter } from "./aggregate-writer.js";

/** The analytics cells (docs/ANALYTICS.md), kept in the same transaction as the tracking entries they summarise. */
export const ANALYTICS_PROJECTION: TrackingProjection = {
  name: "analytics",
  open(store, environmentId) {
    const aggregates = new AggregateWriter(store, environmentId);
    return {
      event: (record) => aggregates.event(record),
      featureEvent: (record) => aggregates.featureEvent(record),
      feedback: (record) => aggregates.feedback(record),
      promptEvent: () => undefined,
      flush: () => void aggregates.flush(),
    };
  },
};
