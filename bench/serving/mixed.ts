/**
 * 80 % evaluation (50 features) and 20 % tracking: first as fast as it goes, then paced at 70 % of that rate, where
 * latency is what matters. wrk2 is not available: the wrk script paces requests on a schedule (see support/load.ts),
 * autocannon uses overallRate. Both measure from when a request is sent, so queueing behind a stalled request is not
 * counted (no coordinated-omission correction); at 70 % load that queueing is rare.
 */
import { failedFigure, measure, type Lab, type LoadFigure } from "../support/lab.js";
import { appWith, type ServiceTarget } from "./evaluation-routes.js";
import { mixedRequests } from "./requests.js";

export const MIXED_MAX_ID = "mixed-max";
export const MIXED_PACED_ID = "mixed-70";
export const PACED_SHARE = 0.7;

export async function benchMixed(lab: Lab, target: ServiceTarget): Promise<LoadFigure[]> {
  const requests = mixedRequests(appWith(target, 50));
  const base = { section: "mixed" as const, server: target.server, baseUrl: target.baseUrl, requests };
  const max = await measure(lab, { ...base, id: MIXED_MAX_ID, title: "mixed 80 % GET /features/evaluated (50 features) + 20 % POST /event, unpaced" });
  const pacedTitle = `the same mix paced at ${PACED_SHARE * 100} % of the unpaced rate`;
  if (!Number.isFinite(max.rps) || max.rps <= 0) return [max, failedFigure({ ...base, id: MIXED_PACED_ID, title: pacedTitle }, "the unpaced run gave no rate")];
  const rate = Math.max(1, Math.round(max.rps * PACED_SHARE));
  return [max, await measure(lab, { ...base, id: MIXED_PACED_ID, title: `${pacedTitle} (${rate.toLocaleString("en")} req/s offered)`, rate, warmUp: false })];
}
