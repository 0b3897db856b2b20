/** CPU spent by each thread of a process, from /proc/<pid>/task/<tid>/stat (Linux only). */
import { readdirSync, readFileSync } from "node:fs";

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

/** CPU per thread between two readings, busiest first (threads that spent none left out). */
export function cpuBetween(before: Map<string, ThreadTicks>, after: Map<string, ThreadTicks>): ThreadCpu[] {
  return [...after]
    .map(([tid, thread]) => ({ tid, name: thread.name, main: thread.name.endsWith("(main)"), ms: (thread.ticks - (before.get(tid)?.ticks ?? 0)) * TICK_MS }))
    .filter((row) => row.ms > 0)
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
