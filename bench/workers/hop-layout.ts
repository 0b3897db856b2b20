/** What bench/workers/hop.ts and its worker share: the rings' layout and the busy work standing in for real work. */

export const HOP = {
  /** Control words (Int32): jobs written by the main thread, completions written by the worker, and flags. */
  JOB_HEAD: 0,
  DONE_HEAD: 1,
  WORKER_WAITING: 2,
  MAIN_WAITING: 3,
  STOP: 4,
  CONTROL_WORDS: 8,
  /** Room for one job's query (the service's distinct-context queries are ~150 bytes). */
  JOB_BYTES: 512,
} as const;

export interface HopSetup {
  slots: number;
  answerBytes: number;
  workUs: number;
  spinUs: number;
  /** Rings: jobs and answers published one by one instead of a batch at a time. */
  perJob: boolean;
  answers: SharedArrayBuffer;
  control: SharedArrayBuffer;
  jobs: SharedArrayBuffer;
  jobLengths: SharedArrayBuffer;
  completions: SharedArrayBuffer;
}

/** Spends about `us` microseconds of CPU. */
export function busyFor(us: number): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
}

/** Atomics.waitAsync (Node 16 and later), which the compiler's ES2022 library does not declare. */
export const waitAsync = (Atomics as unknown as { waitAsync(array: Int32Array, index: number, value: number): { async: true; value: Promise<string> } | { async: false; value: string } }).waitAsync;
