/** CPU spent by each thread of a process, from /proc/<pid>/task/<tid>/stat (Linux only). */
import { readdirSync, readFileSync } from "node:fs";
import { THREAD_NAMES } from "../../src/observability/thread-name.js";

/** Linux counts CPU in clock ticks of 10 ms (USER_HZ 100). */
export const TICK_MS = 10;

export interface ThreadTicks {
  name: string;
  /** user + system clock ticks. */
  ticks: number;
}

/** Clock ticks of CPU per thread, by thread id; the main thread's name gets " (main)". */
export function threadTicks(pid: number): Map<string, ThreadTicks> {
  const threads = new Map<string, ThreadTicks>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      // Fields after the parenthesised command: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1]!.split(" ");
      threads.set(tid, { name: tid === String(pid) ? `${name} (main)` : name, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The thread ended between listing and reading.
    }
  }
  return threads;
}

export interface ThreadCpu {
  tid: string;
  name: string;
  main: boolean;
  ms: number;
}

/**
 * CPU per thread between two readings, busiest first. Threads that spent none are left out, but for the service's
 * own (the main thread and those that name themselves), so that a role shows even when a short run books it no tick.
 */
export function cpuBetween(before: Map<string, ThreadTicks>, after: Map<string, ThreadTicks>): ThreadCpu[] {
  return [...after]
    .map(([tid, thread]) => ({ tid, name: thread.name, main: thread.name.endsWith("(main)"), ms: (thread.ticks - (before.get(tid)?.ticks ?? 0)) * TICK_MS }))
    .filter((row) => row.ms > 0 || threadRole(row) !== "other")
    .sort((a, b) => b.ms - a.ms);
}

/** Idle and total clock ticks of the whole machine, all cores (the first line of /proc/stat). */
export function machineTicks(): { idle: number; total: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user and nice).
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  return { idle: idle + iowait, total: user + nice + system + idle + iowait + irq + softirq + steal };
}

/** The share of the machine's CPU time left idle between two readings (0 when no tick passed). */
export function idleShareBetween(before: { idle: number; total: number }, after: { idle: number; total: number }): number {
  return (after.idle - before.idle) / Math.max(1, after.total - before.total);
}

/**
 * What a thread of the service does, from the name it gives itself (src/observability/thread-name.ts): the main
 * thread is the front end (HTTP, routing, keys, the hop's main side, inline jobs); the rest are V8's and libuv's
 * helpers (garbage collection, lmdb-js's write thread).
 */
export type ThreadRole = "front end" | "worker" | "projector" | "other";

export function threadRole(thread: Pick<ThreadCpu, "name" | "main">): ThreadRole {
  if (thread.main) return "front end";
  if (thread.name.startsWith(THREAD_NAMES.jobWorker)) return "worker";
  if (thread.name === THREAD_NAMES.projector) return "projector";
  return "other";
}

/** CPU µs per item (request, or bulk item) of each thread role over one run. */
export interface RoleCpu {
  frontEnd: number;
  /** Each job worker's, busiest first. */
  workers: number[];
  projector: number;
  other: number;
  total: number;
}

export function roleCpuPerItem(rows: readonly ThreadCpu[], items: number): RoleCpu {
  const per = (ms: number) => (ms * 1000) / Math.max(1, items);
  const split: RoleCpu = { frontEnd: 0, workers: [], projector: 0, other: 0, total: 0 };
  for (const row of rows) {
    const us = per(row.ms);
    split.total += us;
    const role = threadRole(row);
    if (role === "front end") split.frontEnd += us;
    else if (role === "worker") split.workers.push(us);
    else if (role === "projector") split.projector += us;
    else split.other += us;
  }
  split.workers.sort((a, b) => b - a);
  return split;
}

/** The median of each role over several runs (each field on its own). */
export function medianRoleCpu(runs: readonly RoleCpu[], median: (values: number[]) => number): RoleCpu {
  const workerCount = Math.max(0, ...runs.map((run) => run.workers.length));
  return {
    frontEnd: median(runs.map((run) => run.frontEnd)),
    workers: Array.from({ length: workerCount }, (_, index) => median(runs.map((run) => run.workers[index] ?? 0))),
    projector: median(runs.map((run) => run.projector)),
    other: median(runs.map((run) => run.other)),
    total: median(runs.map((run) => run.total)),
  };
}
