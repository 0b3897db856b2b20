/**
 * Where evaluation and ingestion run: inline on the main thread (SWITCHYARD_WORKERS=0) or in a Piscina pool of 1 or
 * 2 threads fed in batches. The same data dir is served by each arrangement in turn; pool 1 is the service's
 * default on a 2-core machine (cores − 1), so its figures come from the main scenarios of the same run.
 */
import { measure, type Lab, type LoadFigure } from "../support/lab.js";
import { startService } from "../support/processes.js";
import type { SeededApp } from "../support/seed.js";
import { evaluateRequests } from "../serving/requests.js";
import { benchBulk, benchEvent, BULK_ID, EVENT_ID } from "../serving/tracking-routes.js";
import { evaluateId } from "../serving/evaluation-routes.js";

export interface Arrangement {
  name: "inline" | "pool-1" | "pool-2";
  workers: number;
}

export const ARRANGEMENTS: readonly Arrangement[] = [
  { name: "inline", workers: 0 },
  { name: "pool-1", workers: 1 },
  { name: "pool-2", workers: 2 },
];

/** The arrangement whose figures the main scenarios provide. */
export const MAIN_WORKERS = 1;

export type Workload = "evaluation" | "tracking" | "bulk";

/** Figure id of a workload under an arrangement (the main scenarios' ids for pool 1). */
export function executorFigureId(arrangement: Arrangement, workload: Workload): string {
  if (arrangement.workers === MAIN_WORKERS) return workload === "evaluation" ? evaluateId(50) : workload === "tracking" ? EVENT_ID : BULK_ID;
  return `executor-${arrangement.name}-${workload === "evaluation" ? evaluateId(50) : workload === "tracking" ? EVENT_ID : BULK_ID}`;
}

export interface ArrangementRun {
  figures: LoadFigure[];
  startupMs: number;
}

/** Serves `dataDir` with `arrangement` and measures 50-feature evaluation, single events and bulk bodies. */
export async function benchArrangement(lab: Lab, arrangement: Arrangement, dataDir: string, evaluationApp: SeededApp, trackingApp: SeededApp): Promise<ArrangementRun> {
  const service = await startService({ dataDir, workers: arrangement.workers, native: true });
  const server = { kind: "service" as const, workers: arrangement.workers, native: true, pid: service.pid };
  try {
    const label = arrangement.workers === 0 ? "inline executor" : `pool of ${arrangement.workers}`;
    const evaluation = await measure(lab, {
      id: executorFigureId(arrangement, "evaluation"),
      section: "executors",
      title: `GET /features/evaluated, 50 features — ${label}`,
      server,
      baseUrl: service.url,
      requests: evaluateRequests(evaluationApp),
    });
    const placement = (workload: Workload) => ({ id: executorFigureId(arrangement, workload), section: "executors" as const, titleSuffix: ` — ${label}` });
    const event = await benchEvent(lab, service.url, server, trackingApp, placement("tracking"));
    const bulk = await benchBulk(lab, service.url, server, trackingApp, placement("bulk"));
    return { figures: [evaluation, event, bulk], startupMs: service.startupMs };
  } finally {
    await service.stop();
  }
}
