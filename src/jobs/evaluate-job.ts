import { contextFromQuery, evaluateRuleset, serializeEvaluation, type EvaluatedFeature } from "../evaluation/index.js";
import { ServiceError } from "../errors/catalogue.js";
import { listOptedInFeatures } from "../optin/opt-in-store.js";
import { recordFeatureEvents, type FeatureEventInput } from "../tracking/index.js";
import type { EvaluateJob, JobResult } from "../workers/protocol.js";
import type { JobContext } from "./job-context.js";

const JSON_HEADERS = { "content-type": "application/json" };

function idOf(entity: unknown): string | undefined {
  if (typeof entity !== "object" || entity === null) return undefined;
  const id = (entity as { id?: unknown }).id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/**
 * Fills `context.user` and `context.company` from what was tracked for that user or company, under what the
 * request itself sent (the request wins). Returns whether anything stored was used.
 */
function mergeRemoteContext(job: EvaluateJob, jobContext: JobContext, context: Record<string, unknown>): boolean {
  let used = false;
  for (const [field, lookup] of [
    ["user", (id: string) => jobContext.tracking.getUserAttributes(job.environmentId, id)],
    ["company", (id: string) => jobContext.tracking.getCompanyAttributes(job.environmentId, id)],
  ] as const) {
    const sent = context[field];
    const id = idOf(sent);
    if (id === undefined) continue;
    const cacheKey = `${job.environmentId}\u0000${field}\u0000${id}`;
    let stored = jobContext.attributes.get(cacheKey, job.attributeEpoch);
    if (stored === undefined) {
      stored = lookup(id) ?? null;
      jobContext.attributes.set(cacheKey, job.attributeEpoch, job.attributeCacheMs, stored);
    }
    if (!stored) continue;
    context[field] = { ...stored, ...(sent as Record<string, unknown>) };
    used = true;
  }
  return used;
}

function evaluateEvents(results: readonly EvaluatedFeature[], context: Record<string, unknown>): FeatureEventInput[] {
  return results.map((result) => ({
    action: "evaluate",
    key: result.key,
    targetingVersion: result.targetingVersion,
    evalContext: context,
    evalResult: result.isEnabled,
    evalRuleResults: result.ruleEvaluationResults,
    evalMissingFields: result.missingContextFields,
    timestamp: undefined,
  }));
}

/** An evaluation's answer and, for `/features/enabled`, the `evaluate` events to store before it is sent. */
export interface Evaluation {
  answer: JobResult;
  featureEvents: FeatureEventInput[];
}

/** `GET /features/evaluated` and `/features/enabled` for one request (API.md §3), events stored before answering. */
export async function runEvaluateJob(jobContext: JobContext, job: EvaluateJob): Promise<JobResult> {
  const { answer, featureEvents } = evaluateJob(jobContext, job);
  if (featureEvents.length > 0) await recordFeatureEvents(jobContext.store, job.environmentId, featureEvents, Date.now());
  return answer;
}

/** The evaluation itself, synchronous: the caller stores `featureEvents` (alone or with other requests' writes). */
export function evaluateJob(jobContext: JobContext, job: EvaluateJob): Evaluation {
  const parsed = contextFromQuery(job.query);
  if (!parsed.ok) throw new ServiceError("INVALID_QUERY", undefined, parsed.issues);
  const current = jobContext.rulesets.get(job.environmentId, job.minFlagStateVersion);
  if (!current) throw new ServiceError("UNAUTHORIZED", "The key's environment no longer exists.");
  const { context } = parsed;
  const remoteContextUsed = mergeRemoteContext(job, jobContext, context);
  const results = evaluateRuleset(current.ruleset, context, {
    ...(parsed.key !== undefined ? { onlyKey: parsed.key } : {}),
    onlyEnabled: job.onlyEnabled,
    ...(current.allowsOptIn
      ? {
          optIns: {
            user: listOptedInFeatures(jobContext.store, job.environmentId, "user", idOf(context.user)),
            company: listOptedInFeatures(jobContext.store, job.environmentId, "company", idOf(context.company)),
          },
        }
      : {}),
  });
  const body = `{"success":true,"flagStateVersion":${current.version},"remoteContextUsed":${remoteContextUsed},"features":${serializeEvaluation(results)}}`;
  return {
    answer: { status: 200, body, headers: JSON_HEADERS },
    featureEvents: job.onlyEnabled && results.length > 0 ? evaluateEvents(results, context) : [],
  };
}
