import type { KvStore } from "../storage/kv.js";
import type { EventRecord, FeatureEventRecord, FeedbackRecord, PromptEventRecord } from "./tracking-records.js";

/** What a projection is told of one feature event (a grouped evaluation carries no single record). */
export type ProjectedFeatureEvent = Pick<FeatureEventRecord, "action" | "key" | "evalResult" | "countsForCompanyId" | "receivedAt"> & { evalContext?: FeatureEventRecord["evalContext"] };

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
 * What derives from tracking is owned by the rooms above it (analytics, surveys), so tracking imports none of them:
 * each is handed to the projector as one of its TrackingProjections.
 */
export interface TrackingProjection {
  readonly name: string;
  open(store: KvStore, environmentId: string): ProjectionWriter;
}

/**
 * Every projection the projector writes beside the tracking entries, by name: the composition supplies each
 * (serving/tracking-projections.ts), so leaving one out does not compile.
 */
export interface TrackingProjections {
  readonly analytics: TrackingProjection;
  readonly surveys: TrackingProjection;
  readonly rollouts: TrackingProjection;
  /** Webhook deliveries of `feedback.created`, queued with the feedback they announce. */
  readonly webhooks: TrackingProjection;
}

/** The projections' writers of one transaction, as one. */
export type ProjectionWriters = Required<ProjectionWriter>;

/** Every projection's writer for one transaction, as one: each record reaches only the writers that take it. */
export function openProjections(projections: TrackingProjections, store: KvStore, environmentId: string): ProjectionWriters {
  const writers = [projections.analytics, projections.surveys, projections.rollouts, projections.webhooks].map((projection) => projection.open(store, environmentId));
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
