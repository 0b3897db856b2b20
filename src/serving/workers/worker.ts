/**
 * The Piscina worker entry: each thread opens the shared LMDB environment once and runs batches of jobs against it.
 * Tracking jobs resolve only after their append to the tracking log commits, so a recycled worker never takes an
 * acknowledged write with it.
 */
import { threadId, workerData } from "node:worker_threads";
import { Piscina } from "piscina";
import { createJobContext, type JobContext } from "../job-context.js";
import { runJobs } from "../run-job.js";
import { LmdbStore } from "../../storage/lmdb-store.js";
import { nameThisThread, THREAD_NAMES } from "../../observability/thread-name.js";
import { AppendTally } from "../../tracking/append-tally.js";
import type { Batch, WorkerSetup } from "../protocol.js";
import { AnswerRing } from "./answer-ring.js";
import { reportFault } from "./report-fault.js";
import { ResultArena } from "./result-packing.js";
import { unpackJobs } from "./job-packing.js";

const setup = workerData as WorkerSetup;
nameThisThread(`${THREAD_NAMES.jobWorker}${threadId}`);
let context: JobContext | undefined;

/** This worker's answer ring: the first unclaimed one (a replaced worker takes none, and moves buffers instead). */
const ringIndex = Atomics.add(new Int32Array(setup.ringClaims), 0, 1);
const ring = ringIndex < setup.rings.length ? new AnswerRing(setup.rings[ringIndex]!) : undefined;
/** Time spent running batches, shared with the main thread (the pool's utilization). */
const busyMicros = new BigInt64Array(setup.busyMicros);

/** Runs a batch; its answers travel back as one moved buffer (see result-packing.ts). */
export default async function runBatch(batch: Batch): Promise<unknown> {
  const started = performance.now();
  try {
    return await runTimed(batch);
  } finally {
    Atomics.add(busyMicros, 0, BigInt(Math.round((performance.now() - started) * 1000)));
  }
}

async function runTimed({ jobs: packedJobs, buffer }: Batch): Promise<unknown> {
  const jobs = unpackJobs(packedJobs);
  // Commits go to lmdb-js's write thread: a worker answers evaluations, and one blocked in a commit's sync would hold
  // up every evaluation queued behind it (see routesToPool for what commits here: /bulk bodies, /features/enabled).
  context ??= createJobContext(new LmdbStore({ path: setup.dataDir, durability: setup.durability }), new AppendTally(setup.appendTally));
  const arena = new ResultArena(jobs.length, buffer);
  // Answers are written straight into the arena (its room for the next body), and set() keeps them there.
  const results = await runJobs(context, jobs, reportFault, (position, answer) => arena.set(position, answer), arena);
  results.forEach((result, position) => {
    if (result !== undefined) arena.set(position, result);
  });
  const packed = arena.finish(ring, ringIndex);
  return packed instanceof ArrayBuffer ? Piscina.move(packed) : packed;
}
