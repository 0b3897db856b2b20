import type { KvStore } from "../storage/kv.js";
import type { EventRecord, FeatureEventRecord, FeedbackRecord, PromptEventRecord } from "./tracking-records.js";

/** What a projection is told of one feature event (a grouped evaluation carries no single record). */
export type ProjectedFeatureEvent = Pick<FeatureEventRecord, "action" | "key" | "evalResult" | "countsForCompanyId" | "receivedAt">;

/**
 * One transaction's writer of something derived from tracking (analytics cells, survey state), written in the same
 * transaction as the entries it derives from. Each method sees the record as stored; a projection has only the
 * methods for the records it derives from.
 */
export interface ProjectionWriter {
  event?(record: EventRecord): void;
  featureEvent?(record: ProjectedFeatureEvent): void;
  feedback?(record: FeedbackRecord): void;
  promptEvent?(record: PromptEventRecord): void;
  /** Called once, after the transaction's last record. */
  flush?(): void;
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

/** The registered projections' writers of one transaction, as one. */
export type ProjectionWriters = Required<ProjectionWriter>;

/** Every registered projection's writer for one transaction, as one: each record reaches only the writers that take it. */
export function openProjections(store: KvStore, environmentId: string): ProjectionWriters {
  const writers = registered.map((projection) => projection.open(store, environmentId));
  const takers = <T>(method: (writer: ProjectionWriter) => ((record: T) => void) | undefined): ((record: T) => void) => {
    const calls = writers.flatMap((writer) => {
      const call = method(writer);
      return call === undefined ? [] : [call.bind(writer)];
    });
    return (record) => {
      for (const call of calls) call(record);
    };
  };
  const flushes = takers<void>((writer) => writer.flush);
  return {
    event: takers((writer) => writer.event),
    featureEvent: takers((writer) => writer.featureEvent),
    feedback: takers((writer) => writer.feedback),
    promptEvent: takers((writer) => writer.promptEvent),
    flush: () => flushes(),
  };
}
