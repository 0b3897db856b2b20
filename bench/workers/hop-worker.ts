/**
 * The worker side of bench/workers/hop.ts: each job costs `workUs` of busy CPU and writes an answer of
 * `answerBytes` into the shared answer area, as an evaluation would; only the way jobs arrive and completions leave
 * differs between the two ways measured.
 */
import { workerData } from "node:worker_threads";
import { busyFor, HOP, waitAsync, type HopSetup } from "./hop-layout.js";

const setup = workerData as HopSetup;
const answers = new Uint8Array(setup.answers);
const template = new Uint8Array(setup.answerBytes).map((_, index) => 32 + (index % 90));

/** One job: the "evaluation", then its answer copied into the job's slot of the answer area. */
function work(slot: number, query: string): number {
  busyFor(setup.workUs);
  // The query is read, as an evaluation reads it.
  if (query.length === 0) throw new Error("empty query");
  answers.set(template, slot * setup.answerBytes);
  return setup.answerBytes;
}

/** Piscina's way (the service's today): a task per batch, answered by the task's result message. */
export default function runBatch(batch: { slots: number[]; queries: string[] }): number[] {
  return batch.slots.map((slot, index) => work(slot, batch.queries[index]!));
}

/**
 * The ring's way: jobs read from a shared ring, completions written to another; the worker spins briefly on an empty
 * ring before it waits (asynchronously, so its event loop keeps running as the service's workers need).
 */
export async function runRing(): Promise<void> {
  const control = new Int32Array(setup.control);
  const lengths = new Int32Array(setup.jobLengths);
  const completions = new Int32Array(setup.completions);
  let tail = 0;
  for (;;) {
    let head = Atomics.load(control, HOP.JOB_HEAD);
    if (head === tail) {
      const spinUntil = performance.now() + setup.spinUs / 1000;
      while (head === tail && performance.now() < spinUntil) head = Atomics.load(control, HOP.JOB_HEAD);
    }
    if (head === tail) {
      Atomics.store(control, HOP.WORKER_WAITING, 1);
      head = Atomics.load(control, HOP.JOB_HEAD);
      if (head === tail) {
        const waited = waitAsync(control, HOP.JOB_HEAD, tail);
        if (waited.async) await waited.value;
      }
      Atomics.store(control, HOP.WORKER_WAITING, 0);
      if (Atomics.load(control, HOP.STOP) === 1) return;
      continue;
    }
    let done = Atomics.load(control, HOP.DONE_HEAD);
    for (; tail !== head; tail = (tail + 1) | 0) {
      const slot = tail % setup.slots;
      // TextDecoder refuses shared memory; a Buffer view of it decodes in place.
      const query = Buffer.from(setup.jobs, slot * HOP.JOB_BYTES, lengths[slot]!).toString("utf8");
      completions[slot * 2] = slot;
      completions[slot * 2 + 1] = work(slot, query);
      done = (done + 1) | 0;
      // Each answer published as soon as it is written, so the main thread can take it while the rest are worked on.
      if (setup.perJob) publish(control, done);
      // New jobs sent meanwhile join this pass.
      if (setup.perJob) head = Atomics.load(control, HOP.JOB_HEAD);
    }
    if (!setup.perJob) publish(control, done);
  }
}

function publish(control: Int32Array, done: number): void {
  Atomics.store(control, HOP.DONE_HEAD, done);
  if (Atomics.load(control, HOP.MAIN_WAITING) === 1) Atomics.notify(control, HOP.DONE_HEAD);
}

if ((workerData as { mode?: string }).mode === "ring") {
  // A pending Atomics.waitAsync does not keep a thread's event loop alive: without this the worker would exit at its first wait.
  const keepAlive = setInterval(() => {}, 1 << 30);
  runRing()
    .finally(() => clearInterval(keepAlive)).catch((error: unknown) => {
    // A failure here would otherwise leave the main thread waiting for completions that never come.
    process.stderr.write(`hop worker: ${String((error as Error)?.stack ?? error)}\n`);
    process.exit(1);
  });
}
