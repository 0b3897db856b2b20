/** The request streams the load scenarios cycle through, built from a seeded app's keys. */
import { bulkEventsBody, bulkMixedBody, contextQuery, DISTINCT_USERS, eventBody, trafficQueries } from "../support/fixtures.js";
import { bearer } from "../support/lab.js";
import type { RequestSpec } from "../support/load.js";
import type { SeededApp } from "../support/seed.js";

/** Events per `/bulk` body. */
export const BULK_SIZE = 1000;

/**
 * The two kinds of evaluation traffic: `distinct`, contexts drawn from 10,000 users × 200 companies (what real
 * traffic looks like, the headline figures); `repeated`, 1,000 users in turn, mostly answered from the answer cache.
 */
export type ContextTraffic = "distinct" | "repeated";

let distinctQueries: string[] | undefined;

/**
 * GET /features/evaluated (or /enabled): distinct contexts by default, or 1,000 users in turn with `contextSize`
 * context parameters each.
 */
export function evaluateRequests(app: SeededApp, options: { contextSize?: number; onlyEnabled?: boolean; traffic?: ContextTraffic } = {}): RequestSpec[] {
  const route = options.onlyEnabled ? "/features/enabled" : "/features/evaluated";
  const headers = bearer(app.publishableKey);
  if ((options.traffic ?? "distinct") === "distinct") {
    distinctQueries ??= trafficQueries();
    return distinctQueries.map((query) => ({ method: "GET", path: `${route}?${query}`, headers }));
  }
  return Array.from({ length: DISTINCT_USERS }, (_, index) => ({
    method: "GET",
    path: `${route}?${contextQuery(index, options.contextSize ?? 6)}`,
    headers,
  }));
}

/** GET /features with the secret key, optionally revalidating with If-None-Match. */
export function rulesRequests(app: SeededApp, etag?: string): RequestSpec[] {
  return [{ method: "GET", path: "/features", headers: etag === undefined ? bearer(app.secretKey) : { ...bearer(app.secretKey), "If-None-Match": etag } }];
}

/** POST /event for 1,000 users in turn (front API), or POST /{trackingKey}/event (tracking API). */
export function eventRequests(app: SeededApp, api: "front" | "tracking" = "front"): RequestSpec[] {
  const path = api === "front" ? "/event" : `/${app.trackingKey}/event`;
  const headers = api === "front" ? bearer(app.publishableKey, true) : { "Content-Type": "application/json" };
  return Array.from({ length: DISTINCT_USERS }, (_, index) => ({ method: "POST", path, headers, body: JSON.stringify(eventBody(index)) }));
}

/** POST /bulk with 1,000 events per body (four different bodies in turn). */
export function bulkRequests(app: SeededApp): RequestSpec[] {
  const headers = bearer(app.publishableKey, true);
  return Array.from({ length: 4 }, (_, index) => ({ method: "POST", path: "/bulk", headers, body: JSON.stringify(bulkEventsBody(BULK_SIZE, index * BULK_SIZE)) }));
}

/** POST /bulk with mixed bodies as backends send them (80 % events, 10 % users, 10 % companies), eight different ones. */
export function bulkMixedRequests(app: SeededApp): RequestSpec[] {
  const headers = bearer(app.publishableKey, true);
  return Array.from({ length: 8 }, (_, index) => ({ method: "POST", path: "/bulk", headers, body: JSON.stringify(bulkMixedBody(BULK_SIZE, 100 + index)) }));
}

/** An app with no keys: for request streams sent to the bare baseline servers, which read none. */
const NO_KEYS: SeededApp = { appId: "", environmentId: "", publishableKey: "", secretKey: "", trackingKey: "", features: 0 };

/** A stream as the bare baseline servers take it: the same bodies, with no key. */
function withoutKey(requests: RequestSpec[]): RequestSpec[] {
  return requests.map((request) => ({ ...request, headers: { "Content-Type": "application/json" } }));
}

/** The event scenario's bodies (1,000 users in turn) for the bare servers. */
export function bareEventRequests(): RequestSpec[] {
  return withoutKey(eventRequests(NO_KEYS));
}

/** The mixed `/bulk` bodies for the bare servers (the /bulk ceiling). */
export function bareBulkMixedRequests(): RequestSpec[] {
  return withoutKey(bulkMixedRequests(NO_KEYS));
}

/** 80 % evaluation, 20 % tracking: four evaluations, then one event, over and over. */
export function mixedRequests(app: SeededApp): RequestSpec[] {
  // Distinct contexts for the evaluations, so the answer cache does not carry the mix.
  const evaluations = evaluateRequests(app);
  const events = eventRequests(app);
  const mixed: RequestSpec[] = [];
  for (let index = 0; index < evaluations.length; index++) mixed.push(index % 5 === 4 ? events[index % events.length]! : evaluations[index]!);
  return mixed;
}

/** The ETag of the current GET /features answer. */
export async function currentEtag(baseUrl: string, app: SeededApp): Promise<string> {
  const response = await fetch(`${baseUrl}/features`, { headers: bearer(app.secretKey) });
  await response.arrayBuffer();
  const etag = response.headers.get("etag");
  if (response.status !== 200 || etag === null) throw new Error(`GET /features answered ${response.status} without an ETag`);
  return etag;
}
