/**
 * The Piscina worker entry: each thread opens the shared LMDB environment once and runs batches of jobs against it.
 * Tracking jobs resolve only after their transaction commits, so a recycled worker never takes an acknowledged write
 * with it.
 */
import { workerData } from "node:worker_threads";
import { createJobContext, type JobContext } from "../jobs/job-context.js";
import { runJobs } from "../jobs/run-job.js";
import { LmdbStore } from "../storage/lmdb-store.js";
import type { Job, JobResult, WorkerSetup } from "./protocol.js";

const setup = workerData as WorkerSetup;
let context: JobContext | undefined;

function reportFault(error: unknown): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level: "error", message: "job failed", error: String((error as Error)?.stack ?? error) })}\n`);
}

export default async function runBatch(jobs: Job[]): Promise<JobResult[]> {
  context ??= createJobContext(new LmdbStore({ path: setup.dataDir, durability: setup.durability, commitOnCallingThread: true }));
  return runJobs(context, jobs, reportFault);
}
