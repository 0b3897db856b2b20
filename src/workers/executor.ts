import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { ServiceError } from "../errors/catalogue.js";
import type { JobContext } from "../jobs/job-context.js";
import { runJob, runJobs } from "../jobs/run-job.js";
import { evaluateJob } from "../jobs/evaluate-job.js";
import type { Batch, EvaluateJob, Job, JobResult, WorkerSetup } from "../jobs/protocol.js";
import { AnswerRing, type RingRegion } from "./answer-ring.js";
import { unpackResults } from "./result-packing.js";
import { BatchGate, sendSpread } from "./batch-gate.js";

/** Runs jobs; `run` rejects only with a retryable OVERLOADED ServiceError when the queue is full. */
export interface Executor {
  readonly kind: "inline" | "pool";
  run(job: Job): Promise<JobResult>;
  /**
   * Inline executors only: evaluates a `/features/evaluated` job at once, on the calling thread. The body may be a
   * transient view (see ApiResponse.transient). Throws a ServiceError for a client's mistake.
   */
  evaluateNow?(job: EvaluateJob): JobResult;
  /** Jobs accepted and not yet answered. */
  pending(): number;
  /** Pools only: the share of the threads' capacity in use (Piscina's utilisation, 0..1). */
  utilization?(): number;
  close(): Promise<void>;
}

/** Tracking requests and the batches they travelled in, as plain numbers (read by GET /metrics). */
export interface TrackingStats {
  batches: number;
  requests: number;
}

const CONCURRENT_TASKS_PER_WORKER = 16;
/**
 * Mean answer size from which evaluations go one batch per worker at a time (BatchGate). Answer size stands for the
 * worker's time per evaluation: at 10 features (~3 KB answers) a batch is short next to the message's round trip, and
 * one batch per worker served 8-22 % less than batches sent as they come; at 50 and 200 features (15 and 60 KB) it
 * served 10-30 % more (docs/BENCHMARKS.md).
 */
const LARGE_ANSWER_BYTES = 8 * 1024;
/** Weight of the latest batch in the running mean of answer sizes. */
const ANSWER_SIZE_WEIGHT = 0.1;
/** Answer buffers kept for reuse: enough for every task in flight. */
const MAX_SPARE_BUFFERS = 64;
/** Shared memory per worker for its answers: 64 batches of 1,000-feature answers. */
const RING_BYTES = 32 * 1024 * 1024;

/** Projection steps are the service's own work: never refused for a full queue, and not counted in it. */
const counts = (job: Job): boolean => job.kind !== "project";

function countedIn(batch: readonly Waiting[]): number {
  let count = 0;
  for (const waiting of batch) if (counts(waiting.job)) count++;
  return count;
}

function overloaded(): ServiceError {
  return new ServiceError("OVERLOADED", undefined, undefined, 1);
}

/** Counts a batch that carried `requests` tracking requests (a batch without any is not counted). */
function countTrackingBatch(stats: TrackingStats | undefined, requests: number): void {
  if (stats === undefined || requests === 0) return;
  stats.batches++;
  stats.requests += requests;
}

/**
 * Runs jobs on the calling thread: the fastest arrangement on small machines, and the only one for a store that lives
 * in this process. Tracking jobs that arrive in one event-loop turn are stored together (runJobs): one transaction,
 * one read and write of each counter, instead of one of each per request.
 */
export function createInlineExecutor(context: JobContext, maxPending: number, onFault: (error: unknown) => void, stats?: TrackingStats): Executor {
  let pending = 0;
  let tracking: Waiting[] = [];

  function flushTracking(): void {
    const batch = tracking;
    tracking = [];
    countTrackingBatch(stats, batch.length);
    runJobs(
      context,
      batch.map((waiting) => waiting.job),
      onFault,
    ).then(
      (results) => {
        pending -= batch.length;
        batch.forEach((waiting, index) => waiting.resolve(results[index]!));
      },
      (error: unknown) => {
        pending -= batch.length;
        for (const waiting of batch) waiting.reject(error);
      },
    );
  }

  return {
    kind: "inline",
    async run(job) {
      if (!counts(job)) return runJob(context, job, onFault);
      if (pending >= maxPending) throw overloaded();
      pending++;
      if (job.kind === "track") {
        return new Promise<JobResult>((resolve, reject) => {
          if (tracking.length === 0) setImmediate(flushTracking);
          tracking.push({ job, resolve, reject });
        });
      }
      try {
        return await runJob(context, job, onFault);
      } finally {
        pending--;
      }
    },
    evaluateNow: (job) => evaluateJob(context, job, { transient: true }).answer,
    pending: () => pending,
    close: async () => {},
  };
}

interface Waiting {
  job: Job;
  resolve: (result: JobResult) => void;
  reject: (error: unknown) => void;
}

export interface PoolOptions {
  threads: number;
  setup: Omit<WorkerSetup, "rings" | "ringClaims">;
  maxPending: number;
  /** Most jobs per task: large batches amortise the message cost, but one worker should not get everything. */
  maxBatch: number;
  stats?: TrackingStats;
}

/**
 * A Piscina pool fed in batches: jobs that arrive in one event-loop turn travel as one task per worker, because a
 * message per request costs the main thread more than a whole hello-world request (see docs/ARCHITECTURE.md).
 */
export function createPoolExecutor(options: PoolOptions): Executor {
  const rings = Array.from({ length: options.threads }, () => AnswerRing.create(RING_BYTES));
  const setup: WorkerSetup = { ...options.setup, rings: rings.map((ring) => ring.shared), ringClaims: new SharedArrayBuffer(4) };
  const pool = new Piscina<Batch, ArrayBuffer | RingRegion>({
    filename: fileURLToPath(new URL("./worker.js", import.meta.url)),
    minThreads: options.threads,
    maxThreads: options.threads,
    idleTimeout: Number.POSITIVE_INFINITY,
    // A tracking batch waits for its commit. Tasks that reach a worker while it commits are taken in together and
    // share its next commit (one task at a time per worker capped tracking at one batch per commit).
    concurrentTasksPerWorker: CONCURRENT_TASKS_PER_WORKER,
    // Piscina's default ("sync") parks an idle worker in Atomics.wait, event loop and all: the commit of an append
    // nobody awaits (the evaluate events of /features/enabled) needs that loop to run lmdb-js's transaction callback,
    // and would wait for the worker's next task. "async" waits with Atomics.waitAsync and keeps the loop running.
    atomics: "async",
    workerData: setup,
  });
  let queue: Waiting[] = [];
  let scheduled = false;
  let pending = 0;
  /** Evaluations go one batch per worker at a time while their answers are large (see BatchGate for why). */
  const evaluations = new BatchGate<Waiting>(options.threads, options.maxBatch, (batch) => dispatch(batch, true));
  let meanAnswerBytes = 0;

  function noteAnswerSizes(results: readonly JobResult[]): void {
    let bytes = 0;
    for (const result of results) bytes += result.body.length;
    meanAnswerBytes += ANSWER_SIZE_WEIGHT * (bytes / Math.max(1, results.length) - meanAnswerBytes);
    evaluations.limit(meanAnswerBytes >= LARGE_ANSWER_BYTES ? 1 : undefined);
  }
  /**
   * Answer buffers back from the workers, sent out again with the next batches: a new buffer per batch, moved to this
   * thread, made V8 run a full collection many times a second for the external memory (88 in 5 s at 50 features).
   */
  const spareBuffers: ArrayBuffer[] = [];

  function dispatch(batch: Waiting[], answering: boolean): void {
    // The largest spare: the one most likely to hold the whole batch (a worker allocates anew when it does not).
    let largest = -1;
    for (let index = 0; index < spareBuffers.length; index++) if (largest < 0 || spareBuffers[index]!.byteLength > spareBuffers[largest]!.byteLength) largest = index;
    const buffer = largest < 0 ? undefined : spareBuffers.splice(largest, 1)[0];
    const task: Batch = { jobs: batch.map((waiting) => waiting.job), buffer };
    if (options.stats !== undefined) {
      let tracking = 0;
      for (const job of task.jobs) if (job.kind === "track") tracking++;
      countTrackingBatch(options.stats, tracking);
    }
    pool.run(task, buffer === undefined ? {} : { transferList: [buffer] }).then(
      (packed) => {
        const ring = packed instanceof ArrayBuffer ? undefined : rings[packed.ring];
        const results = unpackResults(ring === undefined ? (packed as ArrayBuffer) : ring.view(packed as RingRegion));
        pending -= countedIn(batch);
        // The next batch leaves before these answers are written, so that the worker evaluates it meanwhile.
        if (answering) {
          noteAnswerSizes(results);
          evaluations.returned();
        }
        for (let index = 0; index < batch.length; index++) batch[index]!.resolve(results[index]!);
        // The answers are views of the ring or buffer; the front end copies them when it writes them, in the promise
        // reactions of the resolves above, which all run before this.
        setImmediate(() => {
          if (ring !== undefined) ring.release(packed as RingRegion);
          else if (spareBuffers.length < MAX_SPARE_BUFFERS) spareBuffers.push(packed as ArrayBuffer);
        });
      },
      (error: unknown) => {
        pending -= countedIn(batch);
        if (answering) evaluations.returned();
        for (const waiting of batch) waiting.reject(error);
      },
    );
  }

  function flush(): void {
    scheduled = false;
    const waiting = queue;
    queue = [];
    // A batch answers when its last job does: jobs that wait for a commit (`/features/enabled`, `/bulk`) travel apart
    // from evaluations, so that no evaluation's answer waits behind a commit.
    const committing: Waiting[] = [];
    for (const entry of waiting) {
      if (waitsForCommit(entry.job)) committing.push(entry);
      else evaluations.add(entry);
    }
    evaluations.release();
    // Jobs that wait for a commit go at once: a worker takes them in together and they share its next commit.
    sendSpread(committing, options.threads, options.maxBatch, (batch) => dispatch(batch, false));
  }

  return {
    kind: "pool",
    run(job) {
      if (counts(job)) {
        if (pending >= options.maxPending) return Promise.reject(overloaded());
        pending++;
      }
      return new Promise<JobResult>((resolve, reject) => {
        queue.push({ job, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    pending: () => pending,
    utilization: () => pool.utilization,
    close: () => pool.destroy(),
  };
}

/**
 * Which executor a job goes to: evaluations (`/features/enabled` too) and bulk bodies to the pool (the CPU-heavy work,
 * off the thread that serves HTTP; with a pool, projection steps go to a thread of their own instead of an executor:
 * src/workers/projector-thread.ts), single tracking calls inline (their work is small: a
 * validation and one append). Every commit happens on
 * lmdb-js's write thread, so no thread waits for a disk, and the pool sends jobs that wait for a commit in batches
 * of their own (flush), so no evaluation's answer waits behind one. Measured on 2 cores (docs/BENCHMARKS.md): with
 * everything in the pool and commits synchronous in the workers, a worker blocked in each commit's sync held up the
 * evaluations behind it — the 80/20 mix reached half the rate, with a p99 four times longer; `/features/enabled`
 * moved from the main thread to the pool served 8–10 % more with 12–15 % less CPU per request.
 */
export function routesToPool(job: Job): boolean {
  return job.kind !== "track" || job.call === "bulk";
}

/** Whether a job's answer waits for a commit (an evaluation's never does: `/features/enabled` logs without waiting). */
function waitsForCommit(job: Job): boolean {
  return job.kind !== "evaluate";
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
