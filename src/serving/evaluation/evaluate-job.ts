import {
  contextFromQuery,
  evaluateRuleset,
  nestedContext,
  parseFlatQuery,
  serializeEvaluation,
  writeAnswer,
  type AnswerTarget,
  type EvaluatedFeature,
  type FlatQuery,
  type OutcomeView,
} from "../../evaluation/index.js";
import { outcomeMemo } from "../../evaluation/outcome-memo.js";
import { ServiceError } from "../../errors/catalogue.js";
import { listOptedInFeatures } from "../../features/opt-in-store.js";
import { evaluationRow, evaluationsOf, type Evaluations } from "../../tracking/index.js";
import type { EvaluateJob, JobResult } from "../protocol.js";
import type { JobContext } from "../job-context.js";
import { contextEntityId, fillRemoteFields, mergedEntity, mergeRemoteContext, storedEntity, topKeyOf } from "./remote-context.js";
import type { EntityKind, StoredEntity } from "./stored-entity.js";
import type { CurrentRuleset } from "./ruleset-cache.js";
import { compressAnswer } from "../../evaluation/answer-encoding.js";
import { evaluateOfrep } from "./ofrep-job.js";

const JSON_HEADERS = { "content-type": "application/json" };

/** An evaluated item as the `evaluate` event `/features/enabled` records for it. */
function eventOf(result: EvaluatedFeature) {
  return {
    key: result.key,
    targetingVersion: result.targetingVersion,
    evalResult: result.isEnabled,
    evalRuleResults: result.ruleEvaluationResults,
    evalMissingFields: result.missingContextFields,
  };
}

function evaluateEvents(results: readonly EvaluatedFeature[], context: Record<string, unknown>): Evaluations {
  const events = results.map(eventOf);
  return evaluationsOf(
    "evaluate",
    context,
    events.map((event) => event.key),
    events.map(evaluationRow),
    events.map((event) => event.evalResult),
  );
}

/**
 * The stored row of an outcome's event: the same bytes whenever the outcome recurs, so kept with it (an encoding per
 * enabled feature per request was a tenth of `/features/enabled`'s cost).
 */
function eventRowOf(outcome: OutcomeView): Uint8Array {
  const memo = outcomeMemo(outcome);
  return (memo.eventRow ??= evaluationRow(eventOf(outcome.item())));
}

/** An evaluation's answer and, for `/features/enabled`, the `evaluate` events to log (the answer does not wait for them). */
export interface Evaluation {
  answer: JobResult;
  featureEvents: Evaluations | undefined;
}

/**
 * The evaluation itself, synchronous: the caller stores `featureEvents` (alone or with other requests' writes).
 * `/features/evaluated` takes the flat path when the query and the stored attributes allow it (they almost always
 * do); everything else takes the nested one. Both answer the same bytes: the parity suites hold them to it.
 */
export function evaluateJob(jobContext: JobContext, job: EvaluateJob, options: { transient?: boolean; target?: AnswerTarget } = {}): Evaluation {
  const current = jobContext.rulesets.get(job.environmentId, job.minFlagStateVersion);
  if (!current) throw new ServiceError("UNAUTHORIZED", "The key's environment no longer exists.");
  if (job.ofrep !== undefined) return evaluateOfrep(jobContext, job, job.ofrep, current, options.target);
  const flat = parseFlatQuery(job.query);
  const evaluated = flat === undefined ? undefined : evaluateFlat(jobContext, job, current, flat, options.target);
  if (evaluated === undefined) return compressed(job, evaluateNested(jobContext, job, current));
  if (wantsCompression(job, evaluated.bytes.length)) return compressed(job, { answer: { status: 200, body: evaluated.bytes, headers: JSON_HEADERS }, featureEvents: evaluated.featureEvents });
  // The writer's buffer is reused by the next evaluation: copied unless the caller sends it at once.
  const transient = options.transient === true && evaluated.featureEvents === undefined;
  const body = transient ? evaluated.bytes : evaluated.bytes.slice();
  return { answer: { status: 200, body, headers: JSON_HEADERS, transient }, featureEvents: evaluated.featureEvents };
}

function wantsCompression(job: EvaluateJob, bytes: number): boolean {
  return job.encoding !== undefined && job.compressMinBytes !== undefined && job.compressMinBytes > 0 && bytes >= job.compressMinBytes;
}

/** The evaluation with its answer compressed, when the client accepts it and the answer is large enough. */
function compressed(job: EvaluateJob, evaluation: Evaluation): Evaluation {
  const { answer } = evaluation;
  const body = typeof answer.body === "string" ? Buffer.from(answer.body) : answer.body;
  if (!wantsCompression(job, body.length)) return evaluation;
  const encoding = job.encoding!;
  return {
    ...evaluation,
    answer: { status: answer.status, body: compressAnswer(body, encoding), headers: { ...JSON_HEADERS, "content-encoding": encoding, vary: "Accept-Encoding" } },
  };
}

/** Sent paths under `user.` / `company.`: the id, and the top-level attributes the request sent. */
interface SentEntity {
  id: string | undefined;
  topKeys: string[];
  /** The stored entity merged in, when there is one. */
  stored: StoredEntity | null;
}

/**
 * The answer's bytes from the flat query (a view of the writer's reused buffer, or of the room claimed in `target`),
 * or undefined when a stored entity is not flat-safe (the nested path then decides).
 */
function evaluateFlat(
  jobContext: JobContext,
  job: EvaluateJob,
  current: CurrentRuleset,
  flat: FlatQuery,
  target: AnswerTarget | undefined,
): { bytes: Uint8Array; featureEvents: Evaluations | undefined } | undefined {
  const { ruleset } = current;
  const fieldIds = ruleset.fields.ids;
  const values = new Array<string | undefined>(ruleset.fields.size).fill(undefined);
  const user: SentEntity = { id: undefined, topKeys: [], stored: null };
  const company: SentEntity = { id: undefined, topKeys: [], stored: null };
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
    sent.stored = stored;
    remoteContextUsed = true;
  }
  const keys: string[] = [];
  const rows: Uint8Array[] = [];
  const bytes = writeAnswer(ruleset, values, {
    flagStateVersion: current.version,
    remoteContextUsed,
    ...(flat.key !== undefined ? { onlyKey: flat.key } : {}),
    ...(current.allowsOptIn ? { optIns: optInsOf(jobContext, job, user.id, company.id) } : {}),
    ...(target !== undefined ? { target } : {}),
    ...(job.onlyEnabled
      ? {
          onlyEnabled: true,
          onItem: (feature, outcome) => {
            keys.push(feature.key);
            rows.push(eventRowOf(outcome));
          },
        }
      : {}),
  });
  if (!job.onlyEnabled || keys.length === 0) return { bytes, featureEvents: undefined };
  // The context the events record: the request's, with the stored attributes merged in as the nested path does.
  const context = nestedContext(flat);
  for (const [kind, sent] of [["user", user], ["company", company]] as const) {
    if (sent.stored !== null) context[kind] = mergedEntity(sent.stored, context[kind]);
  }
  // Every item of a `/features/enabled` answer is enabled: no results to log beside the keys.
  return { bytes, featureEvents: evaluationsOf("evaluate", context, keys, rows) };
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
    featureEvents: job.onlyEnabled && results.length > 0 ? evaluateEvents(results, context) : undefined,
  };
}
