/**
 * The projector's thread: a Piscina worker of its own that runs projection steps (src/tracking/projector.ts) one at a
 * time, so that a step — tens to hundreds of milliseconds under bulk load — never holds up the evaluations queued on
 * the pool's workers (docs/BENCHMARKS.md, "Log first").
 */
import { workerData } from "node:worker_threads";
import type { ServiceError } from "../errors/catalogue.js";
import { registerTrackingProjections } from "../jobs/projections.js";
import { LmdbStore } from "../storage/lmdb-store.js";
import { projectNextRecords, type ProjectionStep } from "../tracking/projector.js";

export interface ProjectorSetup {
  dataDir: string;
  durability: "commit" | "flush";
}

const setup = workerData as ProjectorSetup;
let store: LmdbStore | undefined;

function reportDropped(error: ServiceError): void {
  const message = `a logged feedback was dropped when projected: ${error.code} ${error.message}`;
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level: "error", message })}\n`);
}

/** One step in its own transaction; the answer is the step's account (its position and what it changed). */
export default async function projectStep({ maxItems }: { maxItems: number }): Promise<ProjectionStep> {
  if (store === undefined) {
    registerTrackingProjections();
    store = new LmdbStore({ path: setup.dataDir, durability: setup.durability });
  }
  const opened = store;
  return opened.write(() => projectNextRecords(opened, maxItems, reportDropped));
}
