/**
 * Tracking under load: single events (front API and tracking API) and 1,000-item bulk bodies. A tracking call is
 * answered once appended to the tracking log; users, companies, event logs and analytics are projected from the log
 * afterwards. Single events are counted as answered (the answer is what a caller waits for); bulk items are counted
 * once projected (support/projection.ts): what a backend flushing its buffers can sustain, not what the log absorbs.
 */
import { measure, type Lab, type LoadFigure, type ServerInfo } from "../support/lab.js";
import type { SeededApp } from "../support/seed.js";
import { BULK_SIZE, bulkMixedRequests, bulkRequests, eventRequests } from "./requests.js";

export const EVENT_ID = "event";
export const BULK_ID = "bulk-1000";
export const BULK_MIXED_ID = "bulk-mixed-1000";
export const TRACKING_API_EVENT_ID = "tracking-api-event";

/**
 * Bulk bodies in flight at once. Fifty 1,000-event bodies would be 50,000 events queued, answered seconds later in
 * one lump (the pool batches jobs by count, not size); a few backends flushing their SDK buffers is the real shape.
 */
export const BULK_CONNECTIONS = 8;
/** A bulk request takes tens of milliseconds: a one-second window would be mostly ramp-up. */
const BULK_MIN_SECONDS = 2;

/** Where a scenario's figure is filed when it is run outside the tracking section (executors, native-free). */
export interface Placement {
  id?: string;
  section?: LoadFigure["section"];
  titleSuffix?: string;
}

export async function benchEvent(lab: Lab, baseUrl: string, server: ServerInfo, app: SeededApp, placement: Placement = {}): Promise<LoadFigure> {
  return measure(lab, {
    id: placement.id ?? EVENT_ID,
    section: placement.section ?? "tracking",
    title: `POST /event, one event per call (answered once logged)${placement.titleSuffix ?? ""}`,
    server,
    baseUrl,
    requests: eventRequests(app),
  });
}

export async function benchBulk(lab: Lab, baseUrl: string, server: ServerInfo, app: SeededApp, placement: Placement = {}): Promise<LoadFigure> {
  return measure(lab, {
    id: placement.id ?? BULK_ID,
    section: placement.section ?? "tracking",
    title: `POST /bulk, ${BULK_SIZE.toLocaleString("en")} events per body, ${BULK_CONNECTIONS} in flight, events projected per second${placement.titleSuffix ?? ""}`,
    server,
    baseUrl,
    requests: bulkRequests(app),
    itemsPerRequest: BULK_SIZE,
    connections: BULK_CONNECTIONS,
    minDurationSeconds: BULK_MIN_SECONDS,
    projected: true,
  });
}

export async function benchTracking(lab: Lab, baseUrl: string, server: ServerInfo, app: SeededApp): Promise<LoadFigure[]> {
  return [
    await benchEvent(lab, baseUrl, server, app),
    await benchBulk(lab, baseUrl, server, app),
    await measure(lab, {
      id: BULK_MIXED_ID,
      section: "tracking",
      title: `POST /bulk, ${BULK_SIZE.toLocaleString("en")} items per body as backends send them (80 % events, 10 % users, 10 % companies of 100,000 users), ${BULK_CONNECTIONS} in flight, items projected per second`,
      server,
      baseUrl,
      requests: bulkMixedRequests(app),
      itemsPerRequest: BULK_SIZE,
      connections: BULK_CONNECTIONS,
      minDurationSeconds: BULK_MIN_SECONDS,
      projected: true,
    }),
    await measure(lab, {
      id: TRACKING_API_EVENT_ID,
      section: "tracking",
      title: "POST /{trackingKey}/event (tracking API, key in the path)",
      server,
      baseUrl,
      requests: eventRequests(app, "tracking"),
      // The same job as POST /event, just measured: only the key lookup differs.
      warmUp: false,
    }),
  ];
}
