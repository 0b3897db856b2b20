/**
 * GET /features/evaluated with the answer cache off (SWITCHYARD_EVALUATION_CACHE_MS=0): every request evaluates.
 * The main scenarios cycle through 1,000 users, so once warm they measure mostly remembered answers; these figures
 * are the cost of a context the service has not seen within the cache's TTL.
 */
import { measure, type Lab, type LoadFigure } from "../support/lab.js";
import { startService } from "../support/processes.js";
import type { SeededApp } from "../support/seed.js";
import { DEFAULT_CONTEXT_SIZE, evaluateId } from "./evaluation-routes.js";
import { evaluateRequests } from "./requests.js";

export const uncachedEvaluateId = (features: number) => `${evaluateId(features)}-uncached`;
export const UNCACHED_FEATURE_COUNTS = [10, 50] as const;

export async function benchUncachedEvaluation(lab: Lab, dataDir: string, workers: number, apps: ReadonlyMap<number, SeededApp>): Promise<LoadFigure[]> {
  const service = await startService({ dataDir, workers, native: true, env: { SWITCHYARD_EVALUATION_CACHE_MS: "0" } });
  const server = { kind: "service" as const, workers, native: true };
  try {
    const figures: LoadFigure[] = [];
    for (const features of UNCACHED_FEATURE_COUNTS) {
      const app = apps.get(features);
      if (!app) continue;
      figures.push(
        await measure(lab, {
          id: uncachedEvaluateId(features),
          section: "evaluation",
          title: `GET /features/evaluated, ${features} features, ${DEFAULT_CONTEXT_SIZE} context params, 1,000 users, answer cache off`,
          server,
          baseUrl: service.url,
          requests: evaluateRequests(app),
        }),
      );
    }
    return figures;
  } finally {
    await service.stop();
  }
}
