import { parseJsonBody, SDK_BODY } from "../../schemas/json-body.js";
import { ServiceError } from "../../errors/catalogue.js";
import { parseTrackingCall, type TrackingItem } from "../../schemas/tracking.js";
import { prepareFeedback } from "../../tracking/logged-feedback.js";
import type { LoggedRequest } from "../../tracking/project-requests.js";
import type { JobResult, TrackJob } from "../protocol.js";
import type { JobContext } from "../job-context.js";
import type { KvStore } from "../../storage/kv.js";

const JSON_HEADERS = { "content-type": "application/json" };
const OK_BODY = '{"success":true}';

/** The answer to a tracking request whose items were all logged (a fresh object: the core adds CORS headers to it). */
export const tracked = (): JobResult => ({ status: 200, body: OK_BODY, headers: JSON_HEADERS });

/** Parses and validates one tracking request as a whole; throws INVALID_BODY (or the body's own 4xx) otherwise. */
export function parseTrackJob(job: TrackJob): readonly TrackingItem[] {
  const body = parseJsonBody(job.body, job.contentType, SDK_BODY);
  const parsed = parseTrackingCall(job.call, body);
  if (!parsed.ok) throw new ServiceError("INVALID_BODY", undefined, parsed.issues);
  return parsed.items;
}

/** Whether any item updates an existing feedback (by its id). */
export function feedbackUpdates(items: readonly TrackingItem[]): boolean {
  return items.some((item) => item.type === "feedback" && item.feedbackId !== undefined);
}

/**
 * One tracking request made ready for the tracking log: validated as a whole, its feedback references checked and
 * the ids of new feedback decided; with the answer it gets once the log holds it. Throws the request's 4xx.
 */
export function prepareTrackJob(jobContext: JobContext, job: TrackJob): { request: LoggedRequest; answer: JobResult } {
  return prepareTrackedItems(jobContext.store, job, parseTrackJob(job));
}

/** The same for items already parsed (the replicated log parses first, to wait for its own writes when it must). */
export function prepareTrackedItems(store: KvStore, job: TrackJob, parsed: readonly TrackingItem[]): { request: LoggedRequest; answer: JobResult } {
  const items = [...parsed];
  const feedbackIds = prepareFeedback(store, job.environmentId, items);
  const request: LoggedRequest = { environmentId: job.environmentId, receivedAt: job.receivedAt, items, feedbackIds };
  if (job.call !== "feedback") return { request, answer: tracked() };
  const item = items[0]!;
  const feedbackId = item.type === "feedback" && item.feedbackId !== undefined ? item.feedbackId : feedbackIds[0];
  return { request, answer: { status: 200, body: JSON.stringify({ success: true, feedbackId }), headers: JSON_HEADERS } };
}
