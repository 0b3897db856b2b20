/**
 * Sends evaluation jobs to the workers in batches, spread over the threads, each at most maxBatch long; when limited,
 * holds them while every worker has a batch in hand and sends what waited as one batch when a worker's comes back.
 *
 * Why a limit: Piscina's worker takes every task queued for it before it posts any answer (its Atomics wait loop
 * receives them all, and each answer is posted after the last of them has run). Batches sent while a worker was busy
 * therefore came back together, late: the main thread sat idle while the worker evaluated, and the worker while the
 * main thread wrote the answers (`perf sched timehist`, docs/BENCHMARKS.md). With one batch per worker, an answer is
 * posted as soon as its batch is done, and the next batch leaves before those answers are written. That pays when a
 * batch takes the worker long; when evaluations are cheap, the message's round trip dominates and
 * batches sent as they come keep the worker busier (see the executor for which applies).
 */
export class BatchGate<T> {
  private readonly waiting: T[] = [];
  private inFlight = 0;
  /** Batches out per thread at once, or undefined: no limit. */
  private perThread: number | undefined;

  /** `send` takes a batch out; the caller calls returned() when it is back, answered or failed. */
  constructor(
    private readonly threads: number,
    private readonly maxBatch: number,
    private readonly send: (batch: T[]) => void,
  ) {}

  /** Limits the batches out to `perThread` per thread (undefined: none); takes effect at the next release. */
  limit(perThread: number | undefined): void {
    this.perThread = perThread;
  }

  /** Queues an item; it leaves at the next release() or returned(). */
  add(item: T): void {
    this.waiting.push(item);
  }

  /** Sends what waits, spread over the threads (over the free slots when limited). */
  release(): void {
    if (this.perThread === undefined) {
      sendSpread(this.waiting.splice(0), this.threads, this.maxBatch, (batch) => this.sendOut(batch));
      return;
    }
    for (let free = this.threads * this.perThread - this.inFlight; free > 0 && this.waiting.length > 0; free--) {
      this.sendOut(this.waiting.splice(0, batchSize(this.waiting.length, free, this.maxBatch)));
    }
  }

  private sendOut(batch: T[]): void {
    this.inFlight++;
    this.send(batch);
  }

  /** A batch came back: its slot is free, and what waited leaves at once. */
  returned(): void {
    this.inFlight--;
    this.release();
  }

  /** Items not sent yet. */
  get queued(): number {
    return this.waiting.length;
  }
}

/** The size of each batch when `count` items are shared out evenly over `shares`, none longer than maxBatch. */
function batchSize(count: number, shares: number, maxBatch: number): number {
  return Math.min(maxBatch, Math.max(1, Math.ceil(count / shares)));
}

/** Sends `items` in order, in batches spread evenly over `shares`, none longer than maxBatch. */
export function sendSpread<T>(items: readonly T[], shares: number, maxBatch: number, send: (batch: T[]) => void): void {
  const size = batchSize(items.length, shares, maxBatch);
  for (let start = 0; start < items.length; start += size) send(items.slice(start, start + size));
}
