/**
 * The messages that cross the thread boundary, as plain data. Jobs are batched: one Piscina task carries an
 * array of jobs and answers an array of results in the same order.
 */
import type { TrackingCall } from "../schemas/tracking.js";
import type { AnswerEncoding } from "../evaluation/answer-encoding.js";

export interface EvaluateJob {
  kind: "evaluate";
  environmentId: string;
  /** The flagStateVersion the main thread knows; a worker that reads less renews its snapshot first. */
  minFlagStateVersion: number;
  /** Raw query string of the request. */
  query: string;
  /** `/features/enabled`: only features that are on, and one `evaluate` feature event each. */
  onlyEnabled: boolean;
  /** The environment's attribute epoch the main thread knows (see serving/evaluation/evaluation-cache.ts). */
  attributeEpoch: number;
  /** How long stored attributes read for remote context may be reused under that epoch; 0 reads them every time. */
  attributeCacheMs: number;
  /** The client accepts this compression, and answers of at least `compressMinBytes` are sent with it. */
  encoding?: AnswerEncoding;
  compressMinBytes?: number;
  /** An OFREP evaluation (API.md §14): the context comes from this body, not the query, and is answered as flags. */
  ofrep?: OfrepRequest;
}

/** What an OFREP evaluation request carries to the worker. */
export interface OfrepRequest {
  /** The flag of `POST /ofrep/v1/evaluate/flags/{key}`; absent for the bulk evaluation. */
  flagKey?: string;
  /** The caller's publishable key: the bulk answer names the event stream it may open. */
  publishableKey?: string;
  body: Uint8Array | null;
  contentType: string | undefined;
}

export interface TrackJob {
  kind: "track";
  environmentId: string;
  call: TrackingCall;
  body: Uint8Array | null;
  contentType: string | undefined;
  receivedAt: number;
}

export type Job = EvaluateJob | TrackJob;

/**
 * One task: the jobs of a batch, packed (see workers/job-packing.ts), and a buffer to write their answers into (moved
 * back with them; see result-packing.ts).
 */
export interface Batch {
  jobs: unknown[];
  buffer: ArrayBuffer | undefined;
}

/** Ready-to-send answer: status, JSON text or its UTF-8 bytes, extra headers. */
export interface JobResult {
  status: number;
  body: string | Uint8Array;
  headers?: Record<string, string>;
  /** The body is a view of a reused buffer (inline evaluation only; see ApiResponse.transient). */
  transient?: boolean;
}

/** What each worker thread is started with. */
export interface WorkerSetup {
  dataDir: string;
  durability: "commit" | "flush";
  /** One answer ring per worker (see answer-ring.ts); a worker claims one with `ringClaims`. */
  rings: SharedArrayBuffer[];
  /** One Int32: how many rings have been claimed. */
  ringClaims: SharedArrayBuffer;
  /** One BigInt64: microseconds the workers have spent running batches (the pool's utilization). */
  busyMicros: SharedArrayBuffer;
  /** Unawaited appends per thread (src/tracking/append-tally.ts). */
  appendTally: SharedArrayBuffer;
}
