/**
 * OFREP (API.md §14) under load, each case beside its `/features/evaluated` counterpart on the same server in the same
 * run: bulk at 10 and 50 features against `/features/evaluated` (the same distinct contexts, as JSON bodies instead of
 * a query), one flag against `/features/evaluated?key=`, and a matching `If-None-Match` against the full bulk answer.
 */
import { contextQuery, DISTINCT_USERS, featureDefinitions, trafficQueries } from "../support/fixtures.js";
import { bearer, failedFigure, measure, type Lab, type LoadFigure } from "../support/lab.js";
import type { RequestSpec } from "../support/load.js";
import type { SeededApp } from "../support/seed.js";
import { appWith, evaluateId, type ServiceTarget } from "./evaluation-routes.js";
import { evaluateRequests } from "./requests.js";

export const ofrepBulkId = (features: number) => `ofrep-bulk-${features}`;
export const OFREP_FLAG_ID = "ofrep-flag-50";
/** Its counterpart: `/features/evaluated?key=` with the same keys and contexts. */
export const EVALUATE_KEY_ID = "evaluate-50-key";
export const OFREP_REVALIDATE_ID = "ofrep-bulk-50-revalidate";
/** The feature counts of the bulk cases. */
export const OFREP_FEATURE_COUNTS = [10, 50] as const;

/** Each OFREP case, the figure it is compared with, and the least ratio to it asked for. */
export const OFREP_PAIRS: readonly { id: string; baseline: string; target: number; text: string }[] = [
  ...OFREP_FEATURE_COUNTS.map((features) => ({ id: ofrepBulkId(features), baseline: evaluateId(features), target: 0.8, text: `≥ 80 % of /features/evaluated at ${features} features` })),
  { id: OFREP_FLAG_ID, baseline: EVALUATE_KEY_ID, target: 0.9, text: "≥ 90 % of /features/evaluated?key=" },
  { id: OFREP_REVALIDATE_ID, baseline: ofrepBulkId(50), target: 2, text: "≥ 2× a full bulk answer at 50 features" },
];

const BULK_PATH = "/ofrep/v1/evaluate/flags";

/** A `context.*` query as the OFREP context a provider sends: the user's id as targetingKey, the rest by namespace. */
export function ofrepContextOf(query: string): Record<string, unknown> {
  const context: Record<string, Record<string, string>> = {};
  let targetingKey: string | undefined;
  for (const [name, value] of new URLSearchParams(query)) {
    if (!name.startsWith("context.")) continue;
    const [namespace, attribute] = name.slice("context.".length).split(".", 2) as [string, string];
    if (namespace === "user" && attribute === "id") targetingKey = value;
    else (context[namespace] ??= {})[attribute] = value;
  }
  return targetingKey === undefined ? context : { targetingKey, ...context };
}

let distinctQueries: string[] | undefined;

/** The distinct contexts of the `/features/evaluated` headline cases (evaluateRequests: the same list, same order). */
function distinct(): string[] {
  distinctQueries ??= trafficQueries();
  return distinctQueries;
}

/** POST /ofrep/v1/evaluate/flags for the distinct contexts, with the publishable key (its answer names the event stream). */
export function ofrepBulkRequests(app: SeededApp, queries: readonly string[] = distinct()): RequestSpec[] {
  const headers = bearer(app.publishableKey, true);
  return queries.map((query) => ({ method: "POST", path: BULK_PATH, headers, body: JSON.stringify({ context: ofrepContextOf(query) }) }));
}

/** The key request `index` asks for: every feature in turn. */
function keyOf(index: number, features: number): string {
  return featureDefinitions(features)[index % features]!.key;
}

/** POST /ofrep/v1/evaluate/flags/{key}, one feature in turn per distinct context (each records a `check` event). */
export function ofrepFlagRequests(app: SeededApp): RequestSpec[] {
  const headers = bearer(app.publishableKey, true);
  return distinct().map((query, index) => ({
    method: "POST",
    path: `${BULK_PATH}/${encodeURIComponent(keyOf(index, app.features))}`,
    headers,
    body: JSON.stringify({ context: ofrepContextOf(query) }),
  }));
}

/** GET /features/evaluated?key= with the same keys and contexts as ofrepFlagRequests. */
export function evaluateKeyRequests(app: SeededApp): RequestSpec[] {
  const headers = bearer(app.publishableKey);
  return distinct().map((query, index) => ({ method: "GET", path: `/features/evaluated?${query}&key=${encodeURIComponent(keyOf(index, app.features))}`, headers }));
}

/**
 * Bulk requests for 1,000 users in turn, each with the ETag its answer has now as `If-None-Match` (all 304s): they
 * come round well within the revalidation memo's bound at any useful rate, so the memo answers them.
 */
export async function ofrepRevalidateRequests(baseUrl: string, app: SeededApp): Promise<RequestSpec[]> {
  const requests = ofrepBulkRequests(
    app,
    Array.from({ length: DISTINCT_USERS }, (_, index) => contextQuery(index)),
  );
  const revalidating: RequestSpec[] = [];
  for (const request of requests) {
    const response = await fetch(baseUrl + request.path, { method: "POST", headers: request.headers, body: request.body! });
    await response.arrayBuffer();
    const etag = response.headers.get("etag");
    if (response.status !== 200 || etag === null) throw new Error(`POST ${request.path} answered ${response.status} without an ETag`);
    revalidating.push({ ...request, headers: { ...request.headers, "If-None-Match": etag } });
  }
  return revalidating;
}

/** One measured case: its id, title, request stream (built when it runs) and the status its answers carry. */
export interface OfrepCase {
  id: string;
  title: string;
  requests: () => Promise<RequestSpec[]> | RequestSpec[];
  expectedStatus: number;
}

/** The OFREP cases in report order, each preceded by its `/features/evaluated` counterpart when asked for. */
export function ofrepCases(target: ServiceTarget, options: { withCounterparts?: boolean } = {}): OfrepCase[] {
  const cases: OfrepCase[] = [];
  for (const features of OFREP_FEATURE_COUNTS) {
    if (!target.apps.has(features)) continue;
    const app = appWith(target, features);
    if (options.withCounterparts) {
      cases.push({ id: evaluateId(features), title: `GET /features/evaluated, ${features} features, distinct contexts (10,000 users × 200 companies)`, requests: () => evaluateRequests(app), expectedStatus: 200 });
    }
    cases.push({ id: ofrepBulkId(features), title: `POST /ofrep/v1/evaluate/flags, ${features} features, distinct contexts (the same, as JSON)`, requests: () => ofrepBulkRequests(app), expectedStatus: 200 });
  }
  if (!target.apps.has(50)) return cases;
  const app = appWith(target, 50);
  cases.push({ id: EVALUATE_KEY_ID, title: "GET /features/evaluated?key=, 50 features (one in turn), distinct contexts", requests: () => evaluateKeyRequests(app), expectedStatus: 200 });
  cases.push({
    id: OFREP_FLAG_ID,
    title: "POST /ofrep/v1/evaluate/flags/{key}, 50 features (one in turn), distinct contexts (records a check event each)",
    requests: () => ofrepFlagRequests(app),
    expectedStatus: 200,
  });
  cases.push({
    id: OFREP_REVALIDATE_ID,
    title: "POST /ofrep/v1/evaluate/flags, 50 features, matching If-None-Match (304), 1,000 users in turn",
    requests: () => ofrepRevalidateRequests(target.baseUrl, app),
    expectedStatus: 304,
  });
  return cases;
}

/** Measures one case on the target (a case whose requests cannot be built is a failed figure). */
export async function measureOfrepCase(lab: Lab, target: ServiceTarget, ofrepCase: OfrepCase): Promise<LoadFigure> {
  const head = { id: ofrepCase.id, section: "evaluation" as const, title: ofrepCase.title, server: target.server };
  let requests: RequestSpec[];
  try {
    requests = await ofrepCase.requests();
  } catch (error) {
    return failedFigure(head, (error as Error).message);
  }
  return measure(lab, { ...head, baseUrl: target.baseUrl, requests, expectedStatus: ofrepCase.expectedStatus });
}

/** The OFREP cases, each measured right after the counterpart it is compared with (measured here too when asked). */
export async function benchOfrep(lab: Lab, target: ServiceTarget, options: { withCounterparts?: boolean } = {}): Promise<LoadFigure[]> {
  const figures: LoadFigure[] = [];
  for (const ofrepCase of ofrepCases(target, options)) figures.push(await measureOfrepCase(lab, target, ofrepCase));
  return figures;
}
