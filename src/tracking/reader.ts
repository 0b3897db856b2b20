import type { Attributes } from "../schemas/tracking-fields.js";
import type { KvStore } from "../storage/kv.js";
import { logEntries, type LogTable } from "./append-log.js";
import { checkListLimit, decodeCursor, encodeCursor } from "../storage/cursor.js";
import type { CompanyRecord, EntityUpdateRecord, EventRecord, FeatureEventRecord, FeedbackRecord, PromptEventRecord, UserRecord } from "./tracking-records.js";
import { readRemoteContext, type EntityKind, type RemoteContext } from "./remote-contexts.js";
import { companyKey, listCompanyUserIds, listUserCompanyIds, userKey } from "./users-companies.js";

/** `GET /admin/environments/:envId/users/:userId` → `user`. Times are ISO strings; lastSeen null if never active. */
export interface UserView {
  id: string;
  attributes: Attributes;
  firstSeen: string;
  lastSeen: string | null;
  companyIds: string[];
}

export interface CompanyView {
  id: string;
  attributes: Attributes;
  firstSeen: string;
  lastSeen: string | null;
  userIds: string[];
}

/**
 * A log record as the management API lists it: its cursor first, the listed times as ISO strings, and the
 * ingestion bookkeeping (`countsForCompanyId` and the like) left out — except on feedback, whose company is what a
 * person reading it asks first: the one its satisfaction counts for, also when it was sent without `companyId`.
 */
type LogView<R, Times extends keyof R, Hidden extends keyof R = never> = { cursor: string } & Omit<R, Times | Hidden> & Record<Times, string>;

export type EventView = LogView<EventRecord, "timestamp" | "receivedAt", "countsForCompanyId" | "active">;
export type FeatureEventView = LogView<FeatureEventRecord, "receivedAt", "countsForCompanyId">;
export type FeedbackView = LogView<FeedbackRecord, "timestamp" | "receivedAt", "createdAt">;
export type PromptEventView = LogView<PromptEventRecord, "receivedAt">;
export type EntityUpdateView = LogView<EntityUpdateRecord, "timestamp" | "receivedAt">;

/** A page of a log: the items and the cursor to continue from (the last item's, or `after` itself when empty). */
export type Page<Name extends string, V> = { [K in Name]: V[] } & { next: string };

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

/** Ids arriving from a URL may hold anything; one that could never have been stored is simply absent. */
const isStorableId = (id: string): boolean => id.length > 0 && !id.includes("\u0000");

/**
 * The read side of tracking for the management API (API.md §6) and for evaluation's remote context. Reads only:
 * every method sees the latest committed data of this thread's snapshot.
 */
/**
 * How much JSON one page of a log may carry. Items are bounded only by the body limits (a feature event's
 * `evalContext` may be close to 2 MiB), so 1000 of them could reach gigabytes: past V8's longest string, or the heap.
 * A page stops early instead (never before its first item); `next` continues it, as for any page.
 */
export const MAX_PAGE_JSON_CHARS = 8 * 1024 * 1024;

export class TrackingReader {
  constructor(
    private readonly store: KvStore,
    private readonly maxPageChars = MAX_PAGE_JSON_CHARS,
  ) {}

  getUser(environmentId: string, userId: string): UserView | undefined {
    const user = this.userRecord(environmentId, userId);
    if (!user) return undefined;
    return {
      id: user.id,
      attributes: user.attributes,
      firstSeen: iso(user.firstSeen),
      lastSeen: isoOrNull(user.lastSeen),
      companyIds: listUserCompanyIds(this.store, environmentId, userId),
    };
  }

  getCompany(environmentId: string, companyId: string): CompanyView | undefined {
    const company = this.companyRecord(environmentId, companyId);
    if (!company) return undefined;
    return {
      id: company.id,
      attributes: company.attributes,
      firstSeen: iso(company.firstSeen),
      lastSeen: isoOrNull(company.lastSeen),
      userIds: listCompanyUserIds(this.store, environmentId, companyId),
    };
  }

  /** The stored attributes of a user (for remote context), or undefined when the user is unknown. */
  getUserAttributes(environmentId: string, userId: string): Attributes | undefined {
    return this.userRecord(environmentId, userId)?.attributes;
  }

  /** The stored attributes of a company (for remote context), or undefined when the company is unknown. */
  getCompanyAttributes(environmentId: string, companyId: string): Attributes | undefined {
    return this.companyRecord(environmentId, companyId)?.attributes;
  }

  /** The flat form of a user's or company's attributes (remoteContexts.ts); undefined when none is stored. */
  getRemoteContext(environmentId: string, kind: EntityKind, id: string): RemoteContext | undefined {
    return isStorableId(id) ? readRemoteContext(this.store, environmentId, kind, id) : undefined;
  }

  /** Events in append order. Throws INVALID_QUERY for a cursor this service did not issue or a bad limit. */
  listEvents(environmentId: string, after: string | undefined, limit: number): Page<"events", EventView> {
    const { items, next } = this.page<EventRecord, EventView>("events", environmentId, after, limit, (cursor, event) => ({
      cursor,
      event: event.event,
      userId: event.userId,
      companyId: event.companyId,
      attributes: event.attributes,
      timestamp: iso(event.timestamp),
      receivedAt: iso(event.receivedAt),
    }));
    return { events: items, next };
  }

  listFeatureEvents(environmentId: string, after: string | undefined, limit: number): Page<"featureEvents", FeatureEventView> {
    const { items, next } = this.page<FeatureEventRecord, FeatureEventView>("featureEvents", environmentId, after, limit, (cursor, event) => ({
      cursor,
      action: event.action,
      key: event.key,
      targetingVersion: event.targetingVersion,
      evalContext: event.evalContext,
      evalResult: event.evalResult,
      evalRuleResults: event.evalRuleResults,
      evalMissingFields: event.evalMissingFields,
      receivedAt: iso(event.receivedAt),
    }));
    return { featureEvents: items, next };
  }

  /** One entry per feedback as last updated; an update moves the feedback to the end of the order. */
  listFeedback(environmentId: string, after: string | undefined, limit: number): Page<"feedback", FeedbackView> {
    const { items, next } = this.page<FeedbackRecord, FeedbackView>("feedback", environmentId, after, limit, (cursor, feedback) => ({
      cursor,
      feedbackId: feedback.feedbackId,
      userId: feedback.userId,
      companyId: feedback.companyId,
      // Records from before attribution was stored have none: their own companyId is what they count for.
      countsForCompanyId: feedback.countsForCompanyId ?? feedback.companyId,
      featureId: feedback.featureId,
      key: feedback.key,
      score: feedback.score,
      comment: feedback.comment,
      question: feedback.question,
      promptedQuestion: feedback.promptedQuestion,
      promptId: feedback.promptId,
      source: feedback.source,
      timestamp: iso(feedback.timestamp),
      receivedAt: iso(feedback.receivedAt),
    }));
    return { feedback: items, next };
  }

  listPromptEvents(environmentId: string, after: string | undefined, limit: number): Page<"promptEvents", PromptEventView> {
    const { items, next } = this.page<PromptEventRecord, PromptEventView>("promptEvents", environmentId, after, limit, (cursor, event) => ({
      cursor,
      action: event.action,
      featureId: event.featureId,
      promptId: event.promptId,
      userId: event.userId,
      promptedQuestion: event.promptedQuestion,
      receivedAt: iso(event.receivedAt),
    }));
    return { promptEvents: items, next };
  }

  /** `/user` and `/company` items in append order, as received (the live tail's third log). */
  listEntityUpdates(environmentId: string, after: string | undefined, limit: number): Page<"updates", EntityUpdateView> {
    const { items, next } = this.page<EntityUpdateRecord, EntityUpdateView>("entityUpdates", environmentId, after, limit, (cursor, update) => ({
      cursor,
      type: update.type,
      userId: update.userId,
      companyId: update.companyId,
      attributes: update.attributes,
      active: update.active,
      timestamp: iso(update.timestamp),
      receivedAt: iso(update.receivedAt),
    }));
    return { updates: items, next };
  }

  private userRecord(environmentId: string, userId: string): UserRecord | undefined {
    return isStorableId(userId) ? this.store.table("users").get(userKey(environmentId, userId)) : undefined;
  }

  private companyRecord(environmentId: string, companyId: string): CompanyRecord | undefined {
    return isStorableId(companyId) ? this.store.table("companies").get(companyKey(environmentId, companyId)) : undefined;
  }

  private page<R, V>(
    table: LogTable,
    environmentId: string,
    after: string | undefined,
    limit: number,
    view: (cursor: string, record: R) => V,
  ): { items: V[]; next: string } {
    const afterSequence = decodeCursor(after);
    const items: V[] = [];
    let chars = 0;
    let lastSequence = afterSequence;
    for (const entry of logEntries<R>(this.store, table, environmentId, afterSequence, checkListLimit(limit))) {
      const item = view(encodeCursor(entry.sequence), entry.value);
      // Measured as the answer will be written; admin reads only, so the second stringify is affordable.
      const size = JSON.stringify(item).length;
      if (items.length > 0 && chars + size > this.maxPageChars) break;
      items.push(item);
      chars += size;
      lastSequence = entry.sequence;
    }
    return { items, next: encodeCursor(lastSequence) };
  }
}
