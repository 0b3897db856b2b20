/**
 * The OFREP evaluations (API.md §14) as a worker runs them: the body parsed and validated here, off the thread that
 * serves HTTP, the context mapped, completed with stored attributes (remote context) and evaluated with the same
 * compiled ruleset as `GET /features/evaluated`, then shaped as OpenFeature flags.
 */
import { hash } from "node:crypto";
import * as v from "valibot";
import {
  contextOfOfrep,
  findOfrepFlag,
  ofrepOutcome,
  outcomeMemo,
  writeAnswer,
  type EvaluatedFeature,
  type OfrepOutcome,
  type OutcomeView,
  type AnswerOptions,
  type AnswerTarget,
} from "../../evaluation/index.js";
import { ofrepEtag, writeOfrepBulk } from "../../evaluation/ofrep-bulk.js";
import { ServiceError } from "../../errors/catalogue.js";
import { listOptedInFeatures } from "../../features/opt-in-store.js";
import { parseJsonBody } from "../../schemas/json-body.js";
import { toValidationIssues } from "../../schemas/issues.js";
import { OfrepContextSchema, OfrepRequestSchema } from "../../schemas/ofrep.js";
import { evaluationRow, evaluationsOf, type Evaluations } from "../../tracking/index.js";
import type { EvaluateJob, JobResult, OfrepRequest } from "../protocol.js";
import type { JobContext } from "../job-context.js";
import { contextEntityId, mergedContext, resolveWithRemoteContext } from "./remote-context.js";
import type { CurrentRuleset } from "./ruleset-cache.js";

const JSON_HEADERS = { "content-type": "application/json" };

type OfrepErrorCode = "PARSE_ERROR" | "INVALID_CONTEXT" | "FLAG_NOT_FOUND";

/** OFREP's error body; a single-flag answer names its flag. */
export function ofrepError(status: number, errorCode: OfrepErrorCode | "GENERAL", errorDetails: string, flagKey?: string): JobResult {
  const body = flagKey === undefined ? { errorCode, errorDetails } : { key: flagKey, errorCode, errorDetails };
  return { status, body: JSON.stringify(body), headers: JSON_HEADERS };
}

/** The request's context, or the 400 that says why there is none. */
function requestContext(request: OfrepRequest): { ok: true; context: Record<string, unknown> } | { ok: false; answer: JobResult } {
  // A body-less POST is an empty context (curl sends no body and no Content-Type for `-X POST`).
  if (request.body === null || request.body.length === 0) return { ok: true, context: {} };
  let parsed: unknown;
  try {
    parsed = parseJsonBody(request.body, request.contentType);
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    const detail = error.validationErrors?.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
    return { ok: false, answer: ofrepError(400, "PARSE_ERROR", detail ? `${error.message} ${detail}` : error.message, request.flagKey) };
  }
  const body = v.safeParse(OfrepRequestSchema, parsed);
  // valibot's objects take arrays too.
  if (!body.success || Array.isArray(parsed)) return { ok: false, answer: ofrepError(400, "PARSE_ERROR", "The request body must be a JSON object.", request.flagKey) };
  if (body.output.context === undefined) return { ok: true, context: {} };
  const context = v.safeParse(OfrepContextSchema, body.output.context);
  if (!context.success || Array.isArray(body.output.context)) {
    const issues = context.success ? [{ path: "context", message: "must be a JSON object" }] : toValidationIssues(context.issues, "context");
    const details = issues.map((issue) => `${issue.path}: ${issue.message}`);
    return { ok: false, answer: ofrepError(400, "INVALID_CONTEXT", details.join("; "), request.flagKey) };
  }
  return { ok: true, context: contextOfOfrep(context.output) };
}

function optInsOf(jobContext: JobContext, job: EvaluateJob, context: Record<string, unknown>) {
  return {
    user: listOptedInFeatures(jobContext.store, job.environmentId, "user", contextEntityId(context, "user")),
    company: listOptedInFeatures(jobContext.store, job.environmentId, "company", contextEntityId(context, "company")),
  };
}

/** The `check` event of an access flag's evaluation, or the `check-config` event of a config flag's. */
function checkEvent(outcome: OutcomeView, item: EvaluatedFeature, config: boolean, context: Record<string, unknown>): Evaluations {
  const memo = outcomeMemo(outcome);
  if (config) {
    const evalResult = { key: item.config.key, payload: (item.config.payload ?? null) as NonNullable<unknown> | null };
    const row = (memo.configEventRow ??= evaluationRow({
      key: item.key,
      targetingVersion: item.config.version,
      evalResult,
      evalRuleResults: item.config.ruleEvaluationResults,
      evalMissingFields: item.config.missingContextFields,
    }));
    return evaluationsOf("check-config", context, [item.key], [row], [evalResult]);
  }
  // The same row as `/features/enabled`'s `evaluate` event of this outcome (the action is not part of it).
  const row = (memo.eventRow ??= evaluationRow({
    key: item.key,
    targetingVersion: item.targetingVersion,
    evalResult: item.isEnabled,
    evalRuleResults: item.ruleEvaluationResults,
    evalMissingFields: item.missingContextFields,
  }));
  return evaluationsOf("check", context, [item.key], [row], [item.isEnabled]);
}

/** A digest of an outcome's text (deterministic, so every thread and node gives one answer one ETag). */
function textDigest(text: string): Uint8Array {
  return hash("sha1", text, "buffer");
}

/** The outcome's OFREP text, made on first sight of the outcome and kept with it. */
function ofrepOf(outcome: OutcomeView, flagStateVersion: number): OfrepOutcome {
  const memo = outcomeMemo(outcome);
  return (memo.ofrep ??= ofrepOutcome(outcome.item(), flagStateVersion, textDigest));
}

/** The outcomes of one bulk answer, in answer order (reused: an evaluation runs to its end before the next starts). */
const bulkOutcomes: OfrepOutcome[] = [];
/** The version the bulk answer being written is evaluated under (module state: no closure per request). */
let bulkVersion = 0;

function collectBulkOutcome(_feature: unknown, outcome: OutcomeView): void {
  bulkOutcomes.push(ofrepOf(outcome, bulkVersion));
}

/**
 * The evaluation of an OFREP job: its answer and, for a single flag, the event to log (nobody waits for it). The
 * features are evaluated by the answer writer, as `/features/evaluated` is: each feature's outcome is a number, and
 * the flags' text is kept per outcome (OutcomeView.memo); the writer's own answer is not assembled. A bulk answer is
 * written into `target` when there is one (the batch's arena), as `/features/evaluated`'s is.
 */
export function evaluateOfrep(
  jobContext: JobContext,
  job: EvaluateJob,
  request: OfrepRequest,
  current: CurrentRuleset,
  target?: AnswerTarget,
): { answer: JobResult; featureEvents: Evaluations | undefined } {
  const parsed = requestContext(request);
  if (!parsed.ok) return { answer: parsed.answer, featureEvents: undefined };
  const context = parsed.context;
  const { ruleset, version } = current;
  const found = request.flagKey === undefined ? undefined : findOfrepFlag(ruleset, request.flagKey);
  if (request.flagKey !== undefined && found === undefined) {
    return { answer: ofrepError(404, "FLAG_NOT_FOUND", `No flag is named ${JSON.stringify(request.flagKey)}.`, request.flagKey), featureEvents: undefined };
  }
  const resolved = resolveWithRemoteContext(jobContext, job, ruleset, context);
  // The writer's outcomes are what OFREP's text is made of; the writer's own answer bytes are not put together.
  const options: AnswerOptions = { flagStateVersion: version, remoteContextUsed: resolved.remoteContextUsed, assemble: false };
  if (current.allowsOptIn) options.optIns = optInsOf(jobContext, job, context);
  if (found !== undefined) {
    let flag: { body: string; event: Evaluations } | undefined;
    options.onlyKey = found.feature.key;
    options.onItem = (_feature, outcome) => {
      const ofrep = ofrepOf(outcome, version);
      flag = { body: found.config ? ofrep.config! : ofrep.access, event: checkEvent(outcome, ofrep.item, found.config, mergedContext(context, resolved.storedUser, resolved.storedCompany)) };
    };
    writeAnswer(ruleset, resolved.values, options);
    return { answer: { status: 200, body: flag!.body, headers: JSON_HEADERS }, featureEvents: flag!.event };
  }
  bulkOutcomes.length = 0;
  bulkVersion = version;
  options.onItem = collectBulkOutcome;
  writeAnswer(ruleset, resolved.values, options);
  const body = writeOfrepBulk(bulkOutcomes, request.publishableKey, target);
  const etag = ofrepEtag(version, request.publishableKey, bulkOutcomes);
  bulkOutcomes.length = 0;
  return { answer: { status: 200, body, headers: { ...JSON_HEADERS, etag } }, featureEvents: undefined };
}
