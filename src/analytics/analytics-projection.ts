import type { TrackingProjection } from "../tracking/projections.js";
import { AggregateWriter } from "./aggregate-writer.js";

/** The analytics cells (docs/ANALYTICS.md), kept in the same transaction as the tracking entries they summarise. */
export const ANALYTICS_PROJECTION: TrackingProjection = {
  name: "analytics",
  open: (store, environmentId) => new AggregateWriter(store, environmentId),
};
