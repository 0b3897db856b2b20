import { parseJsonBody } from "../api/json-body.js";
import { ServiceError } from "../errors/catalogue.js";
import { parseTrackingCall } from "../schemas/tracking.js";
import { applyTracking } from "../tracking/index.js";
import type { JobResult, TrackJob } from "../workers/protocol.js";
import type { JobContext } from "./job-context.js";

const JSON_HEADERS = { "content-type": "application/json" };
const OK_BODY = '{"success":true}';

/** One tracking request: parse, validate as a whole, store all of it in one transaction, answer after commit. */
export async function runTrackJob(jobContext: JobContext, job: TrackJob): Promise<JobResult> {
  const body = parseJsonBody(job.body, job.contentType);
  const parsed = parseTrackingCall(job.call, body);
  if (!parsed.ok) throw new ServiceError("INVALID_BODY", undefined, parsed.issues);
  const { feedbackIds } = await applyTracking(jobContext.store, job.environmentId, parsed.items, job.receivedAt);
  if (job.call === "feedback") return { status: 200, body: JSON.stringify({ success: true, feedbackId: feedbackIds[0] }), headers: JSON_HEADERS };
  return { status: 200, body: OK_BODY, headers: JSON_HEADERS };
}
