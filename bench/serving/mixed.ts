/**
 * 80 % evaluation (50 features) and 20 % tracking: first as fast as it goes, then paced at 70 % of that rate, where
 * latency is what matters. wrk2 is not available: the wrk script paces requests on a schedule (see support/load.ts),
 * autocannon uses overallRate. Both measure from when a request is sent, so queueing behind a stalled request is not
 * counted (no coordinated-omission correction); at 70 % load that queueing is rare.
 */
import { benchGroupCommitAt } from "../baselines/transport.js";
import { failedFigure, measure, type Lab, type LoadFigure } from "../support/lab.js";
import type { SeededApp } from "../support/seed.js";
import { appWith, type ServiceTarget } from "./evaluation-routes.js";
import { evaluateRequests, eventRequests, mixedRequests } from "./requests.js";

export const MIXED_MAX_ID = "mixed-max";
export const MIXED_PACED_ID = "mixed-70";
export const PACED_SHARE = 0.7;
/** The paced mix's parts alone, each at its share of the paced rate: what bounds the mix's p99 (see bounds.ts). */
export const MIXED_SHARE_IDS = {
  evaluation: "mixed-70-evaluations-alone",
  event: "mixed-70-events-alone",
  groupCommit: "mixed-70-group-commit-alone",
} as const;
/** The mix's share of evaluations (four in five requests; see mixedRequests). */
const EVALUATION_SHARE = 0.8;

export async function benchMixed(lab: Lab, target: ServiceTarget): Promise<LoadFigure[]> {
  const app = appWith(target, 50);
  const requests = mixedRequests(app);
  const base = { section: "mixed" as const, server: target.server, baseUrl: target.baseUrl, requests };
  const max = await measure(lab, { ...base, id: MIXED_MAX_ID, title: "mixed 80 % GET /features/evaluated (50 features) + 20 % POST /event, unpaced" });
  const pacedTitle = `the same mix paced at ${PACED_SHARE * 100} % of the unpaced rate`;
  if (!Number.isFinite(max.rps) || max.rps <= 0) return [max, failedFigure({ ...base, id: MIXED_PACED_ID, title: pacedTitle }, "the unpaced run gave no rate")];
  const rate = Math.max(1, Math.round(max.rps * PACED_SHARE));
  const paced = await measure(lab, { ...base, id: MIXED_PACED_ID, title: `${pacedTitle} (${rate.toLocaleString("en")} req/s offered)`, rate, warmUp: false });
  return [max, paced, ...(await benchMixedParts(lab, app, base, rate))];
}

/** Each part of the paced mix alone at its share of `rate`, and the bare group-commit server at the events' share. */
async function benchMixedParts(lab: Lab, app: SeededApp, base: { section: "mixed"; server: ServiceTarget["server"]; baseUrl: string }, rate: number): Promise<LoadFigure[]> {
  const evaluationRate = Math.max(1, Math.round(rate * EVALUATION_SHARE));
  const eventRate = Math.max(1, rate - evaluationRate);
  const evaluations = await measure(lab, {
    ...base,
    id: MIXED_SHARE_IDS.evaluation,
    title: `the mix's evaluations alone, paced at their share (${evaluationRate.toLocaleString("en")} req/s offered)`,
    requests: evaluateRequests(app),
    rate: evaluationRate,
    warmUp: false,
  });
  const events = await measure(lab, {
    ...base,
    id: MIXED_SHARE_IDS.event,
    title: `the mix's POST /event alone, paced at its share (${eventRate.toLocaleString("en")} req/s offered)`,
    requests: eventRequests(app),
    rate: eventRate,
    warmUp: false,
  });
  const bare = await benchGroupCommitAt(lab, MIXED_SHARE_IDS.groupCommit, `bare group-commit server (the /event ceiling's), paced at the mix's event share (${eventRate.toLocaleString("en")} req/s offered)`, eventRate);
  return [evaluations, events, { ...bare, section: "mixed" }];
}
