/** A thin layer over tinybench: run a group of tasks, keep the figures the report needs. */
import { Bench } from "tinybench";

export interface MicroOptions {
  /** Milliseconds of measurement per task. */
  timeMs: number;
  warmupMs: number;
}

export interface MicroFigure {
  group: string;
  name: string;
  /** Calls per second (tinybench's mean throughput). */
  opsPerSecond: number;
  /** Items per second where one call handles many (a 1,000-event bulk body); else equal to opsPerSecond. */
  itemsPerSecond: number;
  itemsPerCall: number;
  meanNs: number;
  p99Ns: number;
  /** Relative margin of error of the mean, in percent. */
  rmePercent: number;
  samples: number;
}

export interface MicroTask {
  name: string;
  fn: () => unknown;
  itemsPerCall?: number;
}

/** Runs the tasks one after another in one Bench (tinybench's advice: compare relatively, in one run). */
export async function runMicro(group: string, tasks: readonly MicroTask[], options: MicroOptions): Promise<MicroFigure[]> {
  const bench = new Bench({ name: group, time: options.timeMs, warmupTime: options.warmupMs, iterations: 16, warmupIterations: 8 });
  for (const task of tasks) bench.add(task.name, task.fn);
  await bench.run();
  return tasks.map((task) => {
    const result = bench.getTask(task.name)?.result;
    if (!result || !("latency" in result)) {
      const reason = result && "error" in result ? String(result.error) : (result?.state ?? "not run");
      throw new Error(`micro-benchmark ${group} / ${task.name} failed: ${reason}`);
    }
    const itemsPerCall = task.itemsPerCall ?? 1;
    const opsPerSecond = result.throughput.mean;
    return {
      group,
      name: task.name,
      opsPerSecond,
      itemsPerSecond: opsPerSecond * itemsPerCall,
      itemsPerCall,
      meanNs: result.latency.mean * 1e6,
      p99Ns: result.latency.p99 * 1e6,
      rmePercent: result.latency.rme,
      samples: result.latency.samplesCount,
    };
  });
}

/** A value the optimiser cannot prove unused. */
export let sink: unknown;
export function consume(value: unknown): void {
  sink = value;
}
