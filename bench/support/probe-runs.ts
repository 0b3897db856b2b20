/**
 * The measured runs of `bench/probe.ts` against one server: the rate, and the CPU each thread role spent per request
 * (from /proc); with `--ledger`, the same against the bare server sending the same bytes, and the two set side by side.
 */
import { answerBytes } from "../baselines/transport.js";
import { BULK_SIZE } from "../serving/requests.js";
import { runLoad, type Driver, type LoadSpec, type RequestSpec } from "./load.js";
import type { Listening } from "./processes.js";
import { projectedRun, startLagSampler, waitCaughtUp } from "./projection.js";
import { median } from "./stats.js";
import { cpuBetween, idleShareBetween, machineTicks, medianRoleCpu, roleCpuPerItem, threadTicks, type RoleCpu } from "./thread-cpu.js";

export interface ProbeRun {
  driver: Driver;
  scratchDir: string;
  seconds: number;
  repeats: number;
  connections: number | undefined;
  rate: number | undefined;
  /** Says how the server was set up, in the result line. */
  label: string;
}

/** The bare server a scenario's ledger row is set against (the same bytes answered, or the same bodies committed). */
export function bareCounterpart(scenario: string): { scenario: "hello-get" | "group-commit" | "bulk-ceiling"; bodyBytes?: number; label: string } | undefined {
  const evaluated = /^evaluate-(\d+)$/.exec(scenario);
  if (evaluated !== null || scenario === "enabled-50") {
    const features = evaluated === null ? 50 : Number(evaluated[1]);
    const bytes = answerBytes(features);
    return { scenario: "hello-get", bodyBytes: bytes, label: `bare uWebSockets.js GET answering ${bytes} B (an evaluated answer at ${features} features)` };
  }
  if (scenario === "event") return { scenario: "group-commit", label: "bare uWebSockets.js POST, one LMDB commit per turn" };
  if (scenario === "bulk-mixed") return { scenario: "bulk-ceiling", label: "bare uWebSockets.js POST of the same bulk bodies, each item put in LMDB" };
  return undefined;
}

const us = (value: number) => value.toFixed(value < 10 ? 2 : 1).padStart(7);

/** Warm-up, then `repeats` measured runs; a line per run and per thread role into `lines`; the median split back. */
export async function probeRuns(scenario: string, server: Listening, requests: readonly RequestSpec[], run: ProbeRun, lines: string[]): Promise<RoleCpu> {
  const itemsPerRequest = scenario.startsWith("bulk") ? BULK_SIZE : 1;
  const connections = run.connections ?? (scenario.startsWith("bulk") ? 8 : 50);
  // Bulk against the service counts items once projected, as the runner does (support/projection.ts).
  const projected = scenario === "bulk" || scenario === "bulk-mixed";
  const spec: LoadSpec = { baseUrl: server.url, requests, connections, durationSeconds: 2, ...(projected ? { countRefusals: true } : {}) };
  await runLoad(run.driver, spec, run.scratchDir); // warm-up
  const splits: RoleCpu[] = [];
  const unit = itemsPerRequest > 1 ? "item" : "request";
  for (let repeat = 0; repeat < run.repeats; repeat++) {
    if (projected) await waitCaughtUp(server.url);
    const before = threadTicks(server.pid);
    const machineBefore = machineTicks();
    const sampler = projected ? startLagSampler(server.url) : undefined;
    const result = await runLoad(run.driver, { ...spec, durationSeconds: run.seconds, ...(run.rate !== undefined ? { rate: run.rate } : {}) }, run.scratchDir);
    const loadEnded = performance.now();
    const machineAfter = machineTicks();
    if (sampler !== undefined) {
      const [lag, caughtUpAt] = await Promise.all([sampler.stop(), waitCaughtUp(server.url)]);
      const projection = projectedRun({ acknowledgedItems: result.acknowledged * itemsPerRequest, refused: result.refused, loadSeconds: result.durationSeconds, catchUpSeconds: (caughtUpAt - loadEnded) / 1000, lagMs: lag.lagMs, backlogMax: lag.backlogMax });
      lines.push(
        `${scenario}: ${Math.round(projection.itemsPerSecond).toLocaleString("en")} items/s projected (${Math.round(projection.acknowledgedPerSecond).toLocaleString("en")} acknowledged over ${projection.loadSeconds.toFixed(2)} s, ` +
          `caught up ${projection.catchUpSeconds.toFixed(2)} s later; lag p99 ${projection.lagP99Ms} ms, max ${projection.lagMaxMs} ms; ${projection.refused} refused); CPU below includes the catch-up`,
      );
    }
    // Read after the catch-up, so that a bulk's CPU includes its projection (as the runner's ledger does).
    const after = threadTicks(server.pid);
    const items = result.requests * itemsPerRequest;
    lines.push(
      `${scenario} (${run.label}): ${Math.round(result.rps * itemsPerRequest).toLocaleString("en")} ${unit}s/s, ` +
        `p50 ${result.latencyMs.p50.toFixed(2)} ms, p99 ${result.latencyMs.p99.toFixed(2)} ms, ${result.errors} errors`,
    );
    const rows = cpuBetween(before, after);
    const split = roleCpuPerItem(rows, items);
    splits.push(split);
    const busy = (perItem: number) => `${(((perItem * items) / 1000 / (result.durationSeconds * 1000)) * 100).toFixed(0).padStart(3)} % of a core`;
    lines.push(`  front end (main thread)   ${us(split.frontEnd)} µs per ${unit}  ${busy(split.frontEnd)}  → ${Math.round(1e6 / Math.max(split.frontEnd, 1e-9)).toLocaleString("en")} ${unit}s/s with unlimited workers`);
    split.workers.forEach((worker, index) => lines.push(`  job worker ${String(index + 1).padEnd(14)} ${us(worker)} µs per ${unit}  ${busy(worker)}`));
    if (split.projector > 0) lines.push(`  projector                 ${us(split.projector)} µs per ${unit}  ${busy(split.projector)}`);
    lines.push(`  other threads (GC, libuv) ${us(split.other)} µs per ${unit}  ${busy(split.other)}`);
    lines.push(`  all threads               ${us(split.total)} µs per ${unit}  ${busy(split.total)}`);
    // Idle cores while the load runs mean the rate is bound by latency (threads waiting on each other), not CPU.
    lines.push(`  machine (load generator included) ${(idleShareBetween(machineBefore, machineAfter) * 100).toFixed(0).padStart(3)} % idle`);
  }
  return medianRoleCpu(splits, median);
}

/** The ledger row of one scenario: its threads beside the bare server's, the ratios and the front-end ceiling. */
export function ledgerLines(scenario: string, service: RoleCpu, bare: RoleCpu): string[] {
  const times = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : "—");
  const workers = service.workers.reduce((sum, value) => sum + value, 0);
  return [
    `ledger ${scenario} (medians over the runs, µs per ${scenario.startsWith("bulk") ? "item" : "request"}):`,
    `  service: front end ${us(service.frontEnd)}, workers ${us(workers)}, projector ${us(service.projector)}, other ${us(service.other)}, total ${us(service.total)}`,
    `  bare:    front end ${us(bare.frontEnd)}, other ${us(bare.total - bare.frontEnd)}, total ${us(bare.total)}`,
    `  ratio ${times(service.total, bare.total)} in all, front end ${times(service.frontEnd, bare.frontEnd)}; ` +
      `front-end ceiling ${Math.round(1e6 / Math.max(service.frontEnd, 1e-9)).toLocaleString("en")}/s against the bare server's ${Math.round(1e6 / Math.max(bare.frontEnd, 1e-9)).toLocaleString("en")}/s`,
  ];
}
