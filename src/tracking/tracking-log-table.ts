import { lastKeyPart, sequenceKeyPart, type KvStore } from "../storage/kv.js";
import type { LoggedRequest } from "./project-requests.js";

/**
 * The standalone tracking log (API.md §4): the truth of every acknowledged tracking call. One record per append —
 * the requests one thread acknowledged together, in the order they arrived — numbered 1, 2, … in commit order (the
 * next number is read in the append's own transaction, and writers are serialised). It lives in the store's
 * `trackingLog` environment when it has one (LMDB), so appends never wait behind a projection step; nothing in it
 * is ever rewritten. What derives from it is projected (projector.ts); the projector's position lives with what it
 * wrote, in the main store's `meta`.
 */
const PROJECTED = "tracking.log.projected";
/**
 * The newest record's sequence, kept in the log's table under a key that sorts before every sequence (`#` < `0`),
 * so record ranges never meet it: reading the last record's key instead decoded the whole record (a tenth of a
 * worker's time under `/features/enabled` load).
 */
const APPENDED_KEY = "#appended";
const BEGUN = "tracking.log.begun";
/**
 * Set once, when the log first appears in a data dir that already held tracking data from before the log: a rebuild
 * from the log could not reproduce that data, so the rebuild command refuses such a dir.
 */
const PREDATES_LOG = "tracking.log.predatedByData";

function meta(store: KvStore) {
  return store.table("meta");
}

/** The store whose `write` appends to the log, and whose `trackingLog` table holds it. */
export function trackingLogStore(store: KvStore): KvStore {
  return store.trackingLog ?? store;
}

function logTable(store: KvStore) {
  return trackingLogStore(store).table("trackingLog");
}

/** Inside a write of `trackingLogStore(store)`: appends one record holding `requests`; answers its sequence number. */
export function appendToTrackingLog(store: KvStore, requests: readonly LoggedRequest[]): number {
  const sequence = lastAppended(store) + 1;
  const table = logTable(store);
  table.put(sequenceKeyPart(sequence), requests as LoggedRequest[]);
  table.put(APPENDED_KEY, sequence);
  return sequence;
}

/** The sequence of the newest record (0 while the log is empty), as this thread's snapshot of the log sees it. */
export function lastAppended(store: KvStore): number {
  return (logTable(store).get(APPENDED_KEY) as number | undefined) ?? 0;
}

/** The sequence of the last record the projector applied (0 before the first). */
export function projectedUpTo(store: KvStore): number {
  return (meta(store).get(PROJECTED) as number | undefined) ?? 0;
}

/** Inside a write, in the transaction that applied the records up to `sequence`. */
export function setProjectedUpTo(store: KvStore, sequence: number): void {
  meta(store).put(PROJECTED, sequence);
}

export interface TrackingLogRecord {
  sequence: number;
  requests: LoggedRequest[];
}

/** The records after `after`, in log order, read lazily. */
export function* trackingLogRecords(store: KvStore, after: number): Generator<TrackingLogRecord> {
  for (const entry of logTable(store).range({ start: sequenceKeyPart(after + 1) })) {
    yield { sequence: Number(lastKeyPart(entry.key)), requests: entry.value as LoggedRequest[] };
  }
}

/** Whether the data dir held tracking data before its log began (see PREDATES_LOG). */
export function dataPredatesLog(store: KvStore): boolean {
  return meta(store).get(PREDATES_LOG) === true;
}

/** Whether the data dir's log was begun (noteDataBeforeLog ran). */
export function logBegun(store: KvStore): boolean {
  return meta(store).get(BEGUN) === true;
}

/**
 * Inside a write, once per data dir (at the first start of a release with the log): marks a dir whose users,
 * companies or events were stored before the tracking log existed.
 */
export function noteDataBeforeLog(store: KvStore): void {
  if (logBegun(store)) return;
  const held = (table: "users" | "companies" | "events" | "featureEvents" | "feedback") => {
    for (const _ of store.table(table).range({ limit: 1 })) return true;
    return false;
  };
  const predates = held("users") || held("companies") || held("events") || held("featureEvents") || held("feedback");
  meta(store).put(PREDATES_LOG, predates);
  meta(store).put(BEGUN, true);
}

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    /** Records of logged requests, and the log's own positions. */
    trackingLog: LoggedRequest[] | number;
  }
}
