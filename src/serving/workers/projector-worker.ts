/**
 * The projector's thread: a Piscina worker of its own that runs projection steps (src/tracking/projector.ts) one at a
 * time, so that a step — tens to hundreds of milliseconds under bulk load — never holds up the evaluations queued on
 * the pool's workers (docs/BENCHMARKS.md, "Log first").
 */
import { workerData } from "node:worker_threads";
import { TRACKING_PROJECTIONS } from "../tracking-projections.js";
import { LmdbStore } from "../../storage/lmdb-store.js";
import { runProjectionStep, type ProjectionStep } from "../../tracking/projector.js";
import { reportFault } from "./report-fault.js";
import { nameThisThread, THREAD_NAMES } from "../../observability/thread-name.js";

export interface ProjectorSetup {
  dataDir: string;
  durability: "commit" | "flush";
}

const setup = workerData as ProjectorSetup;
nameThisThread(THREAD_NAMES.projector);
let store: LmdbStore | undefined;

/** One step in its own transaction; the answer is the step's account (its position and what it changed). */
export default function projectStep({ maxItems }: { maxItems: number }): Promise<ProjectionStep> {
  if (store === undefined) {
    store = new LmdbStore({ path: setup.dataDir, durability: setup.durability });
  }
  return runProjectionStep(store, maxItems, reportFault, TRACKING_PROJECTIONS);
}
