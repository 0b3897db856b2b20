import { ServiceError, type ValidationIssue } from "../errors/catalogue.js";
import { FeatureRepository } from "../features/feature-repository.js";
import type { FeatureRecord } from "../features/feature-records.js";
import type { FeedbackItem, TrackingItem } from "../schemas/tracking.js";
import { key, type KvStore } from "../storage/kv.js";
import { newFeedbackId } from "../tenancy/identifiers.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { logKey, type SequenceAllocator } from "./append-log.js";
import type { FeedbackRecord } from "./tracking-records.js";

/** The feature a feedback names, resolved from its `featureId` or `key`. */
export interface FeatureRef {
  featureId: string;
  key: string;
}

/** Where the feedbackId → sequence index entry of a feedback lives in the `feedback` table. */
export function feedbackIndexKey(environmentId: string, feedbackId: string): string {
  return key(environmentId, "id", feedbackId);
}

/** The current sequence number of a feedback in the feedback log, or undefined when there is no such feedback. */
export function feedbackSequence(store: KvStore, environmentId: string, feedbackId: string): number | undefined {
  return store.table<"feedback", number>("feedback").get(feedbackIndexKey(environmentId, feedbackId));
}

/**
 * Checks what the feedback items of a request refer to: each must name a live feature of the environment's app
 * (`featureId` wins when both are sent, and then `key` must agree), and a `feedbackId` must exist in the
 * environment. Answers the resolved feature per item, or throws a ServiceError listing every bad item:
 * UNKNOWN_FEATURE (400) first, else NOT_FOUND (404) for unknown feedback ids.
 */
export function resolveFeedbackReferences(store: KvStore, environmentId: string, items: readonly TrackingItem[]): Map<FeedbackItem, FeatureRef> {
  const resolved = new Map<FeedbackItem, FeatureRef>();
  const environment = new TenancyRepository(store).getEnvironment(environmentId);
  if (!environment) throw new ServiceError("NOT_FOUND", "The environment does not exist.");
  const features = new FeatureRepository(store);
  const byId = new Map<string, FeatureRecord | undefined>();
  const byKey = new Map<string, FeatureRecord | undefined>();
  const featureIssues: ValidationIssue[] = [];
  const feedbackIssues: ValidationIssue[] = [];
  for (const item of items) {
    if (item.type !== "feedback") continue;
    let feature: FeatureRecord | undefined;
    if (item.featureId !== undefined) {
      feature = memo(byId, item.featureId, (id) => features.getFeatureById(environment.appId, id));
      if (!feature) featureIssues.push({ path: fieldPath(item, "featureId"), message: `no feature has the id "${item.featureId}"` });
      else if (item.key !== undefined && item.key !== feature.key) {
        featureIssues.push({ path: fieldPath(item, "key"), message: `does not name the feature "${item.featureId}" names` });
        feature = undefined;
      }
    } else if (item.key !== undefined) {
      feature = memo(byKey, item.key, (featureKey) => features.getFeature(environment.appId, featureKey));
      if (!feature) featureIssues.push({ path: fieldPath(item, "key"), message: `no feature has the key "${item.key}"` });
    } else {
      // The schema requires one of them; items built in code might not.
      featureIssues.push({ path: fieldPath(item, "featureId"), message: "featureId or key is required" });
    }
    if (feature) resolved.set(item, { featureId: feature.id, key: feature.key });
    if (item.feedbackId !== undefined && feedbackSequence(store, environmentId, item.feedbackId) === undefined) {
      feedbackIssues.push({ path: fieldPath(item, "feedbackId"), message: `no feedback has the id "${item.feedbackId}"` });
    }
  }
  if (featureIssues.length > 0) throw new ServiceError("UNKNOWN_FEATURE", undefined, featureIssues);
  if (feedbackIssues.length > 0) throw new ServiceError("NOT_FOUND", "The feedback to update does not exist.", feedbackIssues);
  return resolved;
}

function memo<V>(cache: Map<string, V>, name: string, load: (name: string) => V): V {
  if (cache.has(name)) return cache.get(name) as V;
  const value = load(name);
  cache.set(name, value);
  return value;
}

function fieldPath(item: TrackingItem, field: string): string {
  return item.path ? `${item.path}.${field}` : field;
}

/**
 * Inside a write: creates a feedback, or updates the one named by `feedbackId`, keeping what the update does not
 * send. The feedback log holds one entry per feedback as last updated: an update re-appends it under a new sequence
 * number and removes the old entry, so a reader paging by cursor sees the update after everything before it.
 * `latestCompanyOf` attributes a feedback sent without companyId (analytics). Answers the record as stored.
 */
export function writeFeedback(
  store: KvStore,
  environmentId: string,
  item: FeedbackItem,
  feature: FeatureRef,
  receivedAt: number,
  sequences: SequenceAllocator,
  latestCompanyOf: (userId: string) => string | null,
  newId: string = newFeedbackId(),
): FeedbackRecord {
  const log = store.table<"feedback", FeedbackRecord>("feedback");
  const index = store.table<"feedback", number>("feedback");
  let record: FeedbackRecord;
  if (item.feedbackId === undefined) {
    record = {
      feedbackId: newId,
      userId: item.userId,
      companyId: item.companyId ?? null,
      countsForCompanyId: item.companyId ?? latestCompanyOf(item.userId),
      featureId: feature.featureId,
      key: feature.key,
      score: item.score ?? null,
      comment: item.comment ?? null,
      question: item.question ?? null,
      promptedQuestion: item.promptedQuestion ?? null,
      promptId: item.promptId ?? null,
      source: item.source ?? null,
      timestamp: item.timestamp ?? receivedAt,
      createdAt: receivedAt,
      receivedAt,
    };
  } else {
    const previousSequence = feedbackSequence(store, environmentId, item.feedbackId);
    const previous = previousSequence === undefined ? undefined : log.get(logKey("feedback", environmentId, previousSequence));
    if (previousSequence === undefined || !previous) {
      // Checked before the write began; only a concurrent change gets here, and throwing rolls this request back.
      throw new ServiceError("NOT_FOUND", "The feedback to update does not exist.", [
        { path: fieldPath(item, "feedbackId"), message: `no feedback has the id "${item.feedbackId}"` },
      ]);
    }
    log.remove(logKey("feedback", environmentId, previousSequence));
    record = {
      feedbackId: previous.feedbackId,
      userId: item.userId,
      companyId: item.companyId ?? previous.companyId,
      // Attributed when created, like an event when received; only a companyId or another user moves it.
      countsForCompanyId:
        item.companyId ?? previous.companyId ?? (item.userId === previous.userId ? previous.countsForCompanyId : latestCompanyOf(item.userId)),
      featureId: feature.featureId,
      key: feature.key,
      score: item.score ?? previous.score,
      comment: item.comment ?? previous.comment,
      question: item.question ?? previous.question,
      promptedQuestion: item.promptedQuestion ?? previous.promptedQuestion,
      promptId: item.promptId ?? previous.promptId,
      source: item.source ?? previous.source,
      timestamp: item.timestamp ?? previous.timestamp,
      createdAt: previous.createdAt,
      receivedAt,
    };
  }
  const sequence = sequences.next("feedback");
  log.put(logKey("feedback", environmentId, sequence), record);
  index.put(feedbackIndexKey(environmentId, record.feedbackId), sequence);
  return record;
}
