import type { LogGroup } from "./append-log.js";
import type { Attributes } from "../schemas/tracking-fields.js";
import type { EventItem, FeatureEventItem, FeedbackItem, PromptEventItem } from "../schemas/tracking.js";

/**
 * An item's fields as stored: every field present, "absent" as null. The records below that keep an item's fields
 * are derived from the item type with it, so a field added to a body schema reaches its record's type.
 */
type Stored<T> = { [K in keyof T]-?: undefined extends T[K] ? Exclude<T[K], undefined> | null : T[K] };

/** What a tracking item carries that is not stored as such. */
type Unstored = "type" | "path";

/**
 * What the tracking tables hold. Times are epoch milliseconds; "absent" is `null` (never `undefined`) so that every
 * record of a kind has one shape. Keys (all start with the environment id):
 * - users `env␀userId`, companies `env␀companyId`
 * - memberships `env␀u␀userId␀companyId` and `env␀c␀companyId␀userId` (both directions, same record)
 * - events, featureEvents, promptEvents `env␀<sequence>` (append logs)
 * - feedback `env␀log␀<sequence>` → FeedbackRecord and `env␀id␀feedbackId` → its sequence
 * - counters `env␀seq␀<table>` → the last sequence number used by that log
 */

export interface UserRecord {
  id: string;
  attributes: Attributes;
  /** The earliest time any call about this user carried. */
  firstSeen: number;
  /** The latest time of an active call; null while every call was `context.active: false`. */
  lastSeen: number | null;
  /** The company this user was most recently associated with (by association time), for event attribution. */
  lastCompanyId: string | null;
  lastCompanyAt: number | null;
}

export interface CompanyRecord {
  id: string;
  attributes: Attributes;
  firstSeen: number;
  lastSeen: number | null;
}

/** One user↔company association; stored under both directions' keys. */
export interface MembershipRecord {
  /** The earliest time a call associated the two. */
  since: number;
}

export type EventRecord = Stored<Pick<EventItem, "event" | "userId" | "companyId">> & {
  /** The company the event counts for when it was ingested: its companyId, else the user's most recent company. */
  countsForCompanyId: string | null;
  attributes: Attributes;
  /** The call's timestamp, or receivedAt when it sent none. */
  timestamp: number;
  receivedAt: number;
  active: boolean;
};

/**
 * One `/user` or `/company` item (or one of `/bulk`) as received: what the dashboard's live tail lists (docs/API.md
 * §9). The users and companies tables keep only the merged result, not the calls.
 */
export interface EntityUpdateRecord {
  type: "user" | "company";
  /** The user, or for `/company` the user it names (if any). */
  userId: string | null;
  companyId: string | null;
  /** As sent (merged into the stored ones); null when the call sent none. */
  attributes: Attributes | null;
  active: boolean;
  /** The call's timestamp, or receivedAt when it sent none. */
  timestamp: number;
  receivedAt: number;
}

export type FeatureEventRecord = Stored<Omit<FeatureEventItem, Unstored>> & {
  /**
   * The company the event counts for (analytics exposure), decided at ingestion: evalContext `company.id`, else the
   * most recent company of evalContext `user.id`, else null.
   */
  countsForCompanyId: string | null;
  receivedAt: number;
};

export type FeedbackRecord = Stored<Omit<FeedbackItem, Unstored | "feedbackId" | "featureId" | "key" | "timestamp">> & {
  feedbackId: string;
  /** The company it counts for (analytics), decided by its latest call: its companyId, else the user's most recent. */
  countsForCompanyId: string | null;
  /** Both resolved from whichever the call named, so either can be listed. */
  featureId: string;
  key: string;
  timestamp: number;
  /** receivedAt of the call that created it. */
  createdAt: number;
  /** receivedAt of the latest call that created or updated it. */
  receivedAt: number;
};

export type PromptEventRecord = Omit<PromptEventItem, Unstored> & { receivedAt: number };

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    users: UserRecord;
    companies: CompanyRecord;
    memberships: MembershipRecord;
    /** The append logs: entries, or group records of several (append-log.ts). */
    events: EventRecord | LogGroup<EventRecord>;
    featureEvents: FeatureEventRecord | LogGroup<FeatureEventRecord>;
    promptEvents: PromptEventRecord | LogGroup<PromptEventRecord>;
    entityUpdates: EntityUpdateRecord | LogGroup<EntityUpdateRecord>;
    /** The feedback log, and the feedbackId → sequence index. */
    feedback: FeedbackRecord | number;
  }
}
