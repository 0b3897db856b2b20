/** GET /features (rules for local evaluation) with and without a matching If-None-Match. */
import { failedFigure, measure, type Lab, type LoadFigure } from "../support/lab.js";
import { appWith, type ServiceTarget } from "./evaluation-routes.js";
import { currentEtag, rulesRequests } from "./requests.js";

export const RULES_ID = "rules-50";
export const RULES_ETAG_ID = "rules-50-etag";

export async function benchRules(lab: Lab, target: ServiceTarget): Promise<LoadFigure[]> {
  const app = appWith(target, 50);
  const plain = await measure(lab, {
    id: RULES_ID,
    section: "rules",
    title: "GET /features, 50 features (full answer with ETag)",
    server: target.server,
    baseUrl: target.baseUrl,
    requests: rulesRequests(app),
  });
  const etagSpec = { id: RULES_ETAG_ID, section: "rules" as const, title: "GET /features, 50 features, matching If-None-Match (304)", server: target.server };
  let etag: string;
  try {
    etag = await currentEtag(target.baseUrl, app);
  } catch (error) {
    return [plain, failedFigure(etagSpec, (error as Error).message)];
  }
  const revalidated = await measure(lab, { ...etagSpec, baseUrl: target.baseUrl, requests: rulesRequests(app, etag), expectedStatus: 304, warmUp: false });
  return [plain, revalidated];
}
