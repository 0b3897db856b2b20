import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import type { Batch, Job, JobResult, WorkerSetup } from "../protocol.js";
import { AnswerRing, type RingRegion } from "./answer-ring.js";
import { unpackResults } from "./result-packing.js";
import { BatchGate, sendSpread } from "./batch-gate.js";
import { packJobs } from "./job-packing.js";
import { countTrackingBatch, overloaded, type Executor, type TrackingStats, type Waiting } from "./executor.js";

const CONCURRENT_TASKS_PER_WORKER = 16;
/**
 * Mean answer size from which evaluations go one batch per worker at a time (BatchGate). Answer size stands for the
 * worker's time per evaluation: with tiny answers (one feature, `?key=`) a batch is short next to the message's round
 * trip, and one batch per worker serves less than batches sent as they come; from a few features up it serves as
 * much or more, in fewer and larger batches that cost the main thread less per request (docs/BENCHMARKS.md, "Figures
 * behind the code": at 10 features, 2 KiB against 8 KiB, the same rate with 15 % less CPU per request).
 */
const LARGE_ANSWER_BYTES = 2 * 1024;
/** Weight of the latest batch in the running mean of answer sizes. */
const ANSWER_SIZE_WEIGHT = 0.1;
/** Answer buffers kept for reuse: enough for every task in flight. */
const MAX_SPARE_BUFFERS = 64;
/** Shared memory per worker for its answers: 64 batches of 1,000-feature answers. */
const RING_BYTES = 32 * 1024 * 1024;

export interface PoolOptions {
  threads: number;
  setup: Omit<WorkerSetup, "rings" | "ringClaims" | "busyMicros">;
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
  const busyMicros = new SharedArrayBuffer(8);
  const setup: WorkerSetup = { ...options.setup, rings: rings.map((ring) => ring.shared), ringClaims: new SharedArrayBuffer(4), busyMicros };
  const startedAt = performance.now();
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
    // Piscina's timing histograms cost the main thread a histogram record and clock reads per task; the pool's
    // utilization is counted by the workers instead (busyMicros).
    recordTiming: false,
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
    const jobs = batch.map((waiting) => waiting.job);
    const task: Batch = { jobs: packJobs(jobs), buffer };
    if (options.stats !== undefined) {
      let tracking = 0;
      for (const job of jobs) if (job.kind === "track") tracking++;
      countTrackingBatch(options.stats, tracking);
    }
    pool.run(task, buffer === undefined ? {} : { transferList: [buffer] }).then(
      (packed) => {
        const ring = packed instanceof ArrayBuffer ? undefined : rings[packed.ring];
        // Evaluation answers (OFREP's JSON text among them) go to the socket as they are: no string made of them.
        const results = unpackResults(ring === undefined ? (packed as ArrayBuffer) : ring.view(packed as RingRegion), answering);
        pending -= batch.length;
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
        pending -= batch.length;
        if (answering) evaluations.returned();
        for (const waiting of batch) waiting.reject(error);
      },
    );
  }

  function flush(): void {
    scheduled = false;
    const waiting = queue;
    queue = [];
    // A batch answers when its last job does: tracking calls, whose answers wait for a commit, travel apart from
    // evaluations (`/features/enabled` too, which logs without waiting), so that no evaluation's answer waits behind one.
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
      if (pending >= options.maxPending) return Promise.reject(overloaded());
      pending++;
      return new Promise<JobResult>((resolve, reject) => {
        queue.push({ job, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    pending: () => pending,
    // Batches that wait for a commit overlap on a worker, so their summed time can pass the capacity: capped at 1.
    utilization: () => Math.min(1, Number(Atomics.load(new BigInt64Array(busyMicros), 0)) / 1000 / Math.max(1, (performance.now() - startedAt) * options.threads)),
    close: () => pool.destroy(),
  };
}

/** Whether a job's answer waits for a commit (an evaluation's never does: `/features/enabled` logs without waiting). */
function waitsForCommit(job: Job): boolean {
  return job.kind !== "evaluate";
}
