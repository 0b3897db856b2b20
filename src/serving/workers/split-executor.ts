import type { Job } from "../protocol.js";
import type { Executor } from "./executor.js";

/**
 * Which executor a job goes to: evaluations (`/features/enabled` too) and bulk bodies to the pool (the CPU-heavy work,
 * off the thread that serves HTTP; with a pool, projection steps go to a thread of their own instead of an executor:
 * src/serving/workers/projector-thread.ts), single tracking calls inline (their work is small: a
 * validation and one append). Every commit happens on
 * lmdb-js's write thread, so no thread waits for a disk, and the pool sends jobs that wait for a commit in batches
 * of their own (flush), so no evaluation's answer waits behind one. With everything in the pool and commits
 * synchronous in the workers, a worker blocked in each commit's sync held up the evaluations behind it; and
 * `/features/enabled` serves more, for less CPU, from the pool than from the main thread (docs/BENCHMARKS.md, "Figures behind the code").
 */
export function routesToPool(job: Job): boolean {
  return job.kind !== "track" || job.call === "bulk";
}

/** The pool for the heavy jobs, the calling thread for the rest (see routesToPool). */
export function createSplitExecutor(pool: Executor, inline: Executor): Executor {
  return {
    kind: "pool",
    run: (job) => (routesToPool(job) ? pool.run(job) : inline.run(job)),
    pending: () => pool.pending() + inline.pending(),
    utilization: () => pool.utilization?.() ?? 0,
    close: async () => {
      await pool.close();
      await inline.close();
    },
  };
}
