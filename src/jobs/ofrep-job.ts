/**
 * The OFREP evaluations (API.md §14) as a worker runs them: the body parsed and validated here, off the thread that
 * serves HTTP, the context mapped, completed with stored attributes (remote context) and evaluated with the same
 * compiled ruleset as `GET /features/evaluated`, then shaped as OpenFeature flags.
 */
import { hash } from "node:crypto";
import * as v from "valibot";
import { accessFlag, configFlag, evaluateRuleset, findOfrepFlag, ofrepFlags, contextOfOfrep, type EvaluatedFeature } from "../evaluation/index.js";
import { ServiceError } from "../errors/catalogue.js";
import { listOptedInFeatures } from "../optin/opt-in-store.js";
import { parseJsonBody } from "../schemas/json-body.js";
import { toValidationIssues } from "../schemas/issues.js";
import { OfrepContextSchema, OfrepRequestSchema } from "../schemas/ofrep.js";
import { evaluationRow, evaluationsOf, type Evaluations } from "../tracking/index.js";
import type { EvaluateJob, JobResult, OfrepRequest } from "./protocol.js";
import type { JobContext } from "./job-context.js";
import { contextEntityId, mergeRemoteContext } from "./remote-context.js";
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

/** The `check` (or `check-config`) event a single-flag evaluation records, as the SDKs' access does. */
function checkEvent(item: EvaluatedFeature, config: boolean, context: Record<string, unknown>): Evaluations {
  if (config) {
    const evalResult = { key: item.config.key, payload: (item.config.payload ?? null) as NonNullable<unknown> | null };
    const row = evaluationRow({ key: item.key, targetingVersion: item.config.version, evalResult, evalRuleResults: item.config.ruleEvaluationResults, evalMissingFields: item.config.missingContextFields });
    return evaluationsOf("check-config", context, [item.key], [row], [evalResult]);
  }
  const row = evaluationRow({ key: item.key, targetingVersion: item.targetingVersion, evalResult: item.isEnabled, evalRuleResults: item.ruleEvaluationResults, evalMissingFields: item.missingContextFields });
  return evaluationsOf("check", context, [item.key], [row], [item.isEnabled]);
}

/** A strong validator of the bulk answer's bytes: it changes exactly when the answer does (API.md §14, caching). */
export function etagOf(body: string): string {
  return `"${hash("sha1", body, "base64url")}"`;
}

/** The evaluation of an OFREP job: its answer and, for a single flag, the event to log (nobody waits for it). */
export function evaluateOfrep(jobContext: JobContext, job: EvaluateJob, request: OfrepRequest, current: CurrentRuleset): { answer: JobResult; featureEvents: Evaluations | undefined } {
  const parsed = requestContext(request);
  if (!parsed.ok) return { answer: parsed.answer, featureEvents: undefined };
  const nested = parsed.context;
  const { ruleset, version } = current;
  if (request.flagKey !== undefined) {
    const found = findOfrepFlag(ruleset, request.flagKey);
    if (found === undefined) {
      return { answer: ofrepError(404, "FLAG_NOT_FOUND", `No flag is named ${JSON.stringify(request.flagKey)}.`, request.flagKey), featureEvents: undefined };
    }
    mergeRemoteContext(jobContext, job, nested);
    const options = { onlyKey: found.feature.key, ...(current.allowsOptIn ? { optIns: optInsOf(jobContext, job, nested) } : {}) };
    const item = evaluateRuleset(ruleset, nested, options)[0]!;
    const flag = found.config ? configFlag(item, version) : accessFlag(item, version);
    return { answer: { status: 200, body: JSON.stringify(flag), headers: JSON_HEADERS }, featureEvents: checkEvent(item, found.config, nested) };
  }
  mergeRemoteContext(jobContext, job, nested);
  const results = evaluateRuleset(ruleset, nested, current.allowsOptIn ? { optIns: optInsOf(jobContext, job, nested) } : {});
  const answer: Record<string, unknown> = { flags: ofrepFlags(results, version) };
  if (request.publishableKey !== undefined) {
    answer.eventStreams = [{ type: "sse", endpoint: { requestUri: `/ofrep/v1/events?publishableKey=${encodeURIComponent(request.publishableKey)}` } }];
  }
  const body = JSON.stringify(answer);
  return { answer: { status: 200, body, headers: { ...JSON_HEADERS, etag: etagOf(body) } }, featureEvents: undefined };
}
