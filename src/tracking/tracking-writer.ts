import type { EventItem, CompanyItem, FeatureEventItem, PromptEventItem, TrackingItem, UserItem } from "../schemas/tracking.js";
import type { KvStore, TableValue } from "../storage/kv.js";
import { featureEventCompany } from "./attribution.js";
import { appendGroup, logKey, SequenceAllocator } from "./append-log.js";
import { writeFeedback, type FeatureRef } from "./feedback.js";
import type { EntityUpdateRecord, EventRecord, FeatureEventRecord, PromptEventRecord } from "./tracking-records.js";
import { EntityWriter, type Sighting } from "./users-companies.js";
import { openProjections, type ProjectionWriters, type TrackingProjections } from "./projections.js";
import { currentEvaluations, EVALUATION_FIELDS, type LoggedEvaluations } from "./evaluations.js";

export { evaluationRow, type Evaluations } from "./evaluations.js";

/** The fields of an event entry, in the order a plain record has them (a group stores them as rows). */
const EVENT_FIELDS: (keyof EventRecord & string)[] = ["event", "userId", "companyId", "countsForCompanyId", "attributes", "timestamp", "receivedAt", "active"];
/**
 * Events of one request stored as one group record of at most this many (append-log.ts): a bulk of events costs a
 * put per group instead of one per event, and a reader paging through a group decodes no more than this at once.
 */
const EVENT_GROUP_MAX = 256;

/** One transaction's worth of tracking writes for one environment. */
export class TrackingWriter {
  private readonly entities: EntityWriter;
  /** The current request's events not yet stored: grouped per request, so the log is the same however requests share a writer. */
  private readonly pendingEvents: EventRecord[] = [];
  private readonly sequences: SequenceAllocator;
  /** What derives from the entries (analytics, surveys), written in the same transaction (projections.ts). */
  private readonly projections: ProjectionWriters;
  private readonly latestCompanyOf = (userId: string): string | null => this.entities.latestCompanyOf(userId);

  constructor(
    private readonly store: KvStore,
    private readonly environmentId: string,
    /** When the request being written arrived; set per request when several share the writer. */
    public receivedAt: number,
    projections: TrackingProjections,
  ) {
    this.entities = new EntityWriter(store, environmentId);
    this.sequences = new SequenceAllocator(store, environmentId);
    this.projections = openProjections(projections, store, environmentId);
  }

  write(item: Exclude<TrackingItem, { type: "feedback" }>): void {
    switch (item.type) {
      case "user":
        this.user(item);
        return;
      case "company":
        this.company(item);
        return;
      case "event":
        this.event(item);
        return;
      case "feature-flag-event":
        this.featureEvent(item);
        return;
      case "prompt-event":
        this.promptEvent(item);
        return;
    }
  }

  /** `newId`: the id a new feedback gets, when decided beforehand (cluster mode: every node must store the same one). */
  feedback(item: Extract<TrackingItem, { type: "feedback" }>, feature: FeatureRef, newId?: string): string {
    const record = writeFeedback(this.store, this.environmentId, item, feature, this.receivedAt, this.sequences, this.latestCompanyOf, newId);
    this.projections.feedback(record);
    return record.feedbackId;
  }

  /** After each request's items: its events are stored (as a group when several). */
  endRequest(): void {
    this.storeEvents();
  }

  finish(): void {
    this.storeEvents();
    this.entities.flush();
    this.sequences.save();
    this.projections.flush();
  }

  private sighting(item: UserItem | CompanyItem | EventItem, attributes: UserItem["attributes"]): Sighting {
    return { attributes, time: item.timestamp ?? this.receivedAt, active: item.active };
  }

  private user(item: UserItem): void {
    const sighting = this.sighting(item, item.attributes);
    this.entities.upsertUser(item.userId, sighting);
    this.entityUpdate("user", item.userId, null, sighting);
  }

  /** `/company` with `userId` also touches the user and associates the two. */
  private company(item: CompanyItem): void {
    const sighting = this.sighting(item, item.attributes);
    this.entities.upsertCompany(item.companyId, sighting);
    this.entityUpdate("company", item.userId ?? null, item.companyId, sighting);
    if (item.userId === undefined) return;
    this.entities.upsertUser(item.userId, { ...sighting, attributes: undefined });
    this.entities.associate(item.userId, item.companyId, sighting.time);
  }

  /**
   * An event touches its user and the company it counts for: its `companyId` (which also associates the two), else
   * the company the user was most recently associated with, else none.
   */
  private event(item: EventItem): void {
    const sighting = this.sighting(item, undefined);
    const user = this.entities.upsertUser(item.userId, sighting);
    let countsFor = user.lastCompanyId;
    if (item.companyId !== undefined) {
      countsFor = item.companyId;
      this.entities.upsertCompany(item.companyId, sighting);
      this.entities.associate(item.userId, item.companyId, sighting.time);
    } else if (countsFor !== null) {
      this.entities.upsertCompany(countsFor, sighting);
    }
    const record: EventRecord = {
      event: item.event,
      userId: item.userId,
      companyId: item.companyId ?? null,
      countsForCompanyId: countsFor,
      attributes: item.attributes ?? {},
      timestamp: sighting.time,
      receivedAt: this.receivedAt,
      active: item.active,
    };
    this.pendingEvents.push(record);
    if (this.pendingEvents.length === EVENT_GROUP_MAX) this.storeEvents();
    this.projections.event(record);
  }

  private storeEvents(): void {
    const events = this.pendingEvents;
    if (events.length === 0) return;
    if (events.length === 1) this.append("events", events[0]!);
    else {
      const rows = events.map((record) => EVENT_FIELDS.map((field) => record[field]));
      appendGroup<EventRecord>(this.store, "events", this.environmentId, this.sequences, { shared: {}, fields: EVENT_FIELDS, rows, count: rows.length });
    }
    events.length = 0;
  }

  private featureEvent(item: FeatureEventItem): void {
    const record: FeatureEventRecord = {
      action: item.action,
      key: item.key,
      targetingVersion: item.targetingVersion ?? null,
      evalContext: item.evalContext ?? null,
      evalResult: item.evalResult ?? null,
      evalRuleResults: item.evalRuleResults ?? null,
      evalMissingFields: item.evalMissingFields ?? null,
      countsForCompanyId: featureEventCompany(item.evalContext, this.latestCompanyOf),
      receivedAt: this.receivedAt,
    };
    this.append("featureEvents", record);
    this.projections.featureEvent(record);
  }

  /** Feature events sharing one context, action and time, as one group: each still its own entry to readers. */
  evaluations(logged: LoggedEvaluations): void {
    const { action, evalContext, keys, evalResults, packedRows } = currentEvaluations(logged);
    if (keys.length === 0) return;
    const countsForCompanyId = featureEventCompany(evalContext, this.latestCompanyOf);
    const receivedAt = this.receivedAt;
    appendGroup<FeatureEventRecord>(this.store, "featureEvents", this.environmentId, this.sequences, {
      shared: { action, evalContext, countsForCompanyId, receivedAt },
      fields: EVALUATION_FIELDS,
      rows: packedRows,
      count: keys.length,
    });
    for (let index = 0; index < keys.length; index++) {
      const evalResult = evalResults === undefined ? true : (evalResults[index] ?? null);
      this.projections.featureEvent({ action, key: keys[index]!, evalResult, countsForCompanyId, receivedAt, evalContext });
    }
  }

  private promptEvent(item: PromptEventItem): void {
    const record: PromptEventRecord = {
      action: item.action,
      featureId: item.featureId,
      promptId: item.promptId,
      userId: item.userId,
      promptedQuestion: item.promptedQuestion,
      receivedAt: this.receivedAt,
    };
    this.append("promptEvents", record);
    this.projections.promptEvent(record);
  }

  /**
   * The call itself, appended for the live tail in this same transaction: one more put per /user or /company item
   * (events and feature events, the hot path, write none).
   */
  private entityUpdate(type: EntityUpdateRecord["type"], userId: string | null, companyId: string | null, sighting: Sighting): void {
    const record: EntityUpdateRecord = { type, userId, companyId, attributes: sighting.attributes ?? null, active: sighting.active, timestamp: sighting.time, receivedAt: this.receivedAt };
    this.append("entityUpdates", record);
  }

  private append<T extends "events" | "featureEvents" | "promptEvents" | "entityUpdates">(table: T, record: TableValue<T>): void {
    this.store.table(table).put(logKey(table, this.environmentId, this.sequences.next(table)), record);
  }
}
