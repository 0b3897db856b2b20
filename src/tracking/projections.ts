import type { KvStore } from "../storage/kv.js";
import type { EventRecord, FeatureEventRecord, FeedbackRecord, PromptEventRecord } from "./tracking-records.js";

/** What a projection is told of one feature event (a grouped evaluation carries no single record). */
export type ProjectedFeatureEvent = Pick<FeatureEventRecord, "action" | "key" | "evalResult" | "countsForCompanyId" | "receivedAt">;

/**
 * One transaction's writer of something derived from tracking (analytics cells, survey state), written in the same
 * transaction as the entries it derives from. Each method sees the record as stored.
 */
export interface ProjectionWriter {
  event(record: EventRecord): void;
  featureEvent(record: ProjectedFeatureEvent): void;
  feedback(record: FeedbackRecord): void;
  promptEvent(record: PromptEventRecord): void;
  /** Called once, after the transaction's last record. */
  flush(): void;
}

/**
 * What derives from tracking is owned by the rooms above it (analytics, surveys): they register here, so tracking
 * imports none of them. Registered once per thread by the composition (jobs/projections.ts).
 */
export interface TrackingProjection {
  readonly name: string;
  open(store: KvStore, environmentId: string): ProjectionWriter;
}

const registered: TrackingProjection[] = [];

/** Idempotent by name: a thread that composes twice keeps one of each. */
export function registerTrackingProjection(projection: TrackingProjection): void {
  if (!registered.some((each) => each.name === projection.name)) registered.push(projection);
}

/** The registered projections' names, for tests and a start-up check. */
export function trackingProjectionNames(): string[] {
  return registered.map((each) => each.name);
}

/** Every registered projection's writer for one transaction, as one. */
export function openProjections(store: KvStore, environmentId: string): ProjectionWriter {
  const writers = registered.map((projection) => projection.open(store, environmentId));
  if (writers.length === 1) return writers[0]!;
  return {
    event: (record) => writers.forEach((writer) => writer.event(record)),
    featureEvent: (record) => writers.forEach((writer) => writer.featureEvent(record)),
    feedback: (record) => writers.forEach((writer) => writer.feedback(record)),
    promptEvent: (record) => writers.forEach((writer) => writer.promptEvent(record)),
    flush: () => writers.forEach((writer) => writer.flush()),
  };
}
