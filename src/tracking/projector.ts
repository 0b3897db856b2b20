import type { ServiceError } from "../errors/catalogue.js";
import type { KvStore } from "../storage/kv.js";
import { evaluationCount } from "./evaluations.js";
import { projectRequests, type LoggedRequest } from "./project-requests.js";
import type { TrackingProjections } from "./projections.js";
import { lastAppended, projectedUpTo, setProjectedUpTo, trackingLogRecords } from "./tracking-log-table.js";

/** What one projection step did, and where it left the projector. */
export interface ProjectionStep {
  /** The last record applied (the projector's position after this step). */
  position: number;
  /** The newest record this step's transaction saw: `position === appended` means it caught up. */
  appended: number;
  records: number;
  requests: number;
  /** Tracking items and evaluate events applied. */
  items: number;
  /** Environments whose users or companies changed (evaluation caches to invalidate). */
  changed: string[];
  /** Arrival time (epoch ms) of the oldest request still unprojected after this step; null when caught up. */
  oldestUnprojectedAt: number | null;
}

/**
 * Items taken per step. Appends do not wait for a step (LMDB keeps the log in an environment of its own), so a step
 * may be long: the more it takes, the more often a user, a company or a cell seen again is written once for several
 * calls; past this size a step gains no more (docs/BENCHMARKS.md, "Log first").
 */
export const DEFAULT_STEP_ITEMS = 16_000;

function itemCount(request: LoggedRequest): number {
  return request.items.length + (request.evaluations === undefined ? 0 : evaluationCount(request.evaluations));
}

/**
 * One projection step in a write of its own (on the main thread of a pool-less service, or on the projector's thread): a feedback
 * dropped when projected is reported through `onFault`.
 */
export function runProjectionStep(store: KvStore, maxItems: number, onFault: (error: unknown) => void, projections: TrackingProjections): Promise<ProjectionStep> {
  const onDropped = (error: ServiceError) => onFault(new Error(`a logged feedback was dropped when projected: ${error.code} ${error.message}`));
  return store.write(() => projectNextRecords(store, maxItems, onDropped, projections));
}

/**
 * Inside a write: applies the records after the projector's position, whole records only, until about `maxItems`
 * items, and stores the new position in the same transaction: after a crash the projector resumes right after the
 * last record it committed, never applying one twice nor skipping one.
 */
export function projectNextRecords(store: KvStore, maxItems: number, onDropped: (error: ServiceError) => void, projections: TrackingProjections): ProjectionStep {
  // The log's own environment is read through a snapshot of its own: take the latest (other threads append to it).
  store.trackingLog?.refresh();
  const from = projectedUpTo(store);
  const appended = lastAppended(store);
  const requests: LoggedRequest[] = [];
  let position = from;
  let records = 0;
  let items = 0;
  let oldestUnprojectedAt: number | null = null;
  for (const record of trackingLogRecords(store, from)) {
    if (records > 0 && items >= maxItems) {
      oldestUnprojectedAt = record.requests[0]?.receivedAt ?? null;
      break;
    }
    for (const request of record.requests) {
      requests.push(request);
      items += itemCount(request);
    }
    position = record.sequence;
    records++;
  }
  const changed = records === 0 ? new Set<string>() : projectRequests(store, requests, onDropped, projections);
  if (records > 0) setProjectedUpTo(store, position);
  return { position, appended: Math.max(appended, position), records, requests: requests.length, items, changed: [...changed], oldestUnprojectedAt };
}
