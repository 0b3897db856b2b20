import {
  contextFromQuery,
  evaluateRuleset,
  parseFlatQuery,
  serializeEvaluation,
  writeAnswer,
  type EvaluatedFeature,
  type FlatQuery,
} from "../evaluation/index.js";
import { ServiceError } from "../errors/catalogue.js";
import { listOptedInFeatures } from "../optin/opt-in-store.js";
import { recordFeatureEvents, type FeatureEventInput } from "../tracking/index.js";
import type { EvaluateJob, JobResult } from "../workers/protocol.js";
import type { JobContext } from "./job-context.js";
import { contextEntityId, fillRemoteFields, mergeRemoteContext, storedEntity, topKeyOf, type EntityKind } from "./remote-context.js";
import type { CurrentRuleset } from "./ruleset-cache.js";

const JSON_HEADERS = { "content-type": "application/json" };

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

/**
 * The evaluation itself, synchronous: the caller stores `featureEvents` (alone or with other requests' writes).
 * `/features/evaluated` takes the flat path when the query and the stored attributes allow it (they almost always
 * do); everything else takes the nested one. Both answer the same bytes: the parity suites hold them to it.
 */
export function evaluateJob(jobContext: JobContext, job: EvaluateJob, options: { transient?: boolean } = {}): Evaluation {
  const current = jobContext.rulesets.get(job.environmentId, job.minFlagStateVersion);
  if (!current) throw new ServiceError("UNAUTHORIZED", "The key's environment no longer exists.");
  if (!job.onlyEnabled) {
    const flat = parseFlatQuery(job.query);
    const bytes = flat === undefined ? undefined : evaluateFlat(jobContext, job, current, flat);
    // The writer's buffer is reused by the next evaluation: copied unless the caller sends it at once.
    if (bytes !== undefined) {
      const body = options.transient === true ? bytes : bytes.slice();
      return { answer: { status: 200, body, headers: JSON_HEADERS, transient: options.transient === true }, featureEvents: [] };
    }
  }
  return evaluateNested(jobContext, job, current);
}

/** Sent paths under `user.` / `company.`: the id, and the top-level attributes the request sent. */
interface SentEntity {
  id: string | undefined;
  topKeys: string[];
}

/**
 * The answer's bytes from the flat query (a view of the writer's reused buffer), or undefined when a stored entity is
 * not flat-safe (the nested path then decides).
 */
function evaluateFlat(jobContext: JobContext, job: EvaluateJob, current: CurrentRuleset, flat: FlatQuery): Uint8Array | undefined {
  const { ruleset } = current;
  const fieldIds = ruleset.fields.ids;
  const values = new Array<string | undefined>(ruleset.fields.size).fill(undefined);
  const user: SentEntity = { id: undefined, topKeys: [] };
  const company: SentEntity = { id: undefined, topKeys: [] };
  for (let index = 0; index < flat.paths.length; index++) {
    const path = flat.paths[index]!;
    const value = flat.values[index]!;
    const id = fieldIds.get(path);
    if (id !== undefined) values[id] = value;
    if (path.startsWith("user.")) noteSent(user, path, value, 5);
    else if (path.startsWith("company.")) noteSent(company, path, value, 8);
  }
  let remoteContextUsed = false;
  for (const [kind, sent] of [["user", user], ["company", company]] as [EntityKind, SentEntity][]) {
    // idOf: a non-empty string id (an empty one names nobody).
    if (sent.id === undefined || sent.id === "") continue;
    const stored = storedEntity(jobContext, job, kind, sent.id);
    if (stored === null) continue;
    const storedFlat = stored.flat;
    if (storedFlat === null) return undefined;
    fillRemoteFields(values, ruleset, kind, storedFlat, sent.topKeys);
    remoteContextUsed = true;
  }
  const bytes = writeAnswer(ruleset, values, {
    flagStateVersion: current.version,
    remoteContextUsed,
    ...(flat.key !== undefined ? { onlyKey: flat.key } : {}),
    ...(current.allowsOptIn ? { optIns: optInsOf(jobContext, job, user.id, company.id) } : {}),
  });
  return bytes;
}

function noteSent(entity: SentEntity, path: string, value: string, from: number): void {
  const topKey = topKeyOf(path, from);
  if (topKey === "id" && path.length === from + 2) entity.id = value;
  if (!entity.topKeys.includes(topKey)) entity.topKeys.push(topKey);
}

function optInsOf(jobContext: JobContext, job: EvaluateJob, userId: string | undefined, companyId: string | undefined) {
  return {
    user: listOptedInFeatures(jobContext.store, job.environmentId, "user", userId),
    company: listOptedInFeatures(jobContext.store, job.environmentId, "company", companyId),
  };
}

/**
 * The general path: the nested context, remote context merged into it, evaluated into result objects. Exported for
 * the test that holds the flat path to it.
 */
export function evaluateNested(jobContext: JobContext, job: EvaluateJob, current: CurrentRuleset): Evaluation {
  const parsed = contextFromQuery(job.query);
  if (!parsed.ok) throw new ServiceError("INVALID_QUERY", undefined, parsed.issues);
  const { context } = parsed;
  const remoteContextUsed = mergeRemoteContext(jobContext, job, context);
  const results = evaluateRuleset(current.ruleset, context, {
    ...(parsed.key !== undefined ? { onlyKey: parsed.key } : {}),
    onlyEnabled: job.onlyEnabled,
    ...(current.allowsOptIn ? { optIns: optInsOf(jobContext, job, contextEntityId(context, "user"), contextEntityId(context, "company")) } : {}),
  });
  const body = `{"success":true,"flagStateVersion":${current.version},"remoteContextUsed":${remoteContextUsed},"features":${serializeEvaluation(results)}}`;
  return {
    answer: { status: 200, body, headers: JSON_HEADERS },
    featureEvents: job.onlyEnabled && results.length > 0 ? evaluateEvents(results, context) : [],
  };
}
