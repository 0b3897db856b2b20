import { parseJsonBody } from "../schemas/json-body.js";
import { ServiceError } from "../errors/catalogue.js";
import { parseTrackingCall, type TrackingItem } from "../schemas/tracking.js";
import { applyTracking } from "../tracking/index.js";
import type { JobResult, TrackJob } from "./protocol.js";
import type { JobContext } from "./job-context.js";

const JSON_HEADERS = { "content-type": "application/json" };
const OK_BODY = '{"success":true}';

/** The answer to a tracking request whose items were all stored (a fresh object: the core adds CORS headers to it). */
export const tracked = (): JobResult => ({ status: 200, body: OK_BODY, headers: JSON_HEADERS });

/** Parses and validates one tracking request as a whole; throws INVALID_BODY (or the body's own 4xx) otherwise. */
export function parseTrackJob(job: TrackJob): readonly TrackingItem[] {
  const body = parseJsonBody(job.body, job.contentType);
  const parsed = parseTrackingCall(job.call, body);
  if (!parsed.ok) throw new ServiceError("INVALID_BODY", undefined, parsed.issues);
  return parsed.items;
}

/** One tracking request on its own: parse, validate as a whole, store all of it in one transaction, answer after commit. */
export async function runTrackJob(jobContext: JobContext, job: TrackJob, items = parseTrackJob(job)): Promise<JobResult> {
  const { feedbackIds } = await applyTracking(jobContext.store, job.environmentId, items, job.receivedAt);
  if (job.call === "feedback") return { status: 200, body: JSON.stringify({ success: true, feedbackId: feedbackIds[0] }), headers: JSON_HEADERS };
  return tracked();
}
