/**
 * Names the calling thread as the kernel shows it (/proc/<pid>/task/<tid>/comm, `top -H`, `ps -L`), so that the CPU
 * each thread spends can be told apart by role: Node leaves every thread of a process named after the process.
 * Linux only; elsewhere, or where /proc is not writable, the thread keeps its name.
 */
import { writeFileSync } from "node:fs";

/** The kernel keeps 15 bytes of a thread's name. */
const MAX_NAME_BYTES = 15;

export const THREAD_NAMES = {
  /** Piscina workers that run evaluation and tracking jobs; the worker's threadId follows. */
  jobWorker: "sy-jobs-",
  projector: "sy-projector",
} as const;

export function nameThisThread(name: string): void {
  if (process.platform !== "linux") return;
  try {
    writeFileSync("/proc/thread-self/comm", name.slice(0, MAX_NAME_BYTES));
  } catch {
    // Older kernels without /proc/thread-self, or a read-only /proc: only the name is lost.
  }
}
