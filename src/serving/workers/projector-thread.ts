import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import type { ProjectionStep } from "../../tracking/projector.js";
import type { ProjectorSetup } from "./projector-worker.js";

/** The projector's own thread (see projector-worker.ts): steps go to it one at a time. */
export interface ProjectorThread {
  step(maxItems: number): Promise<ProjectionStep>;
  close(): Promise<void>;
}

export function startProjectorThread(setup: ProjectorSetup): ProjectorThread {
  const pool = new Piscina<{ maxItems: number }, ProjectionStep>({
    filename: fileURLToPath(new URL("./projector-worker.js", import.meta.url)),
    minThreads: 1,
    maxThreads: 1,
    idleTimeout: Number.POSITIVE_INFINITY,
    concurrentTasksPerWorker: 1,
    // No timing histograms: nothing reads them, and they cost a record per step.
    recordTiming: false,
    workerData: setup,
  });
  return {
    step: (maxItems) => pool.run({ maxItems }),
    close: () => pool.destroy(),
  };
}
