/** What every benchmark gets: the mode, the load generator, scratch space, progress output; and one load scenario's measurement. */
import { runLoad, type Driver, type LoadResult, type RequestSpec } from "./load.js";
import type { Mode } from "./modes.js";
import { projectedRun, projectionFigure, startLagSampler, waitCaughtUp, type ProjectedRun, type ProjectionFigure } from "./projection.js";
import { expectStatus } from "./seed.js";
import { median, spread, type Spread } from "./stats.js";
import { cpuBetween, idleShareBetween, machineTicks, medianRoleCpu, roleCpuPerItem, threadTicks, type RoleCpu } from "./thread-cpu.js";

export interface Lab {
  mode: Mode;
  driver: Driver;
  scratchDir: string;
  /** Progress on stderr; the reports are the output. */
  log(message: string): void;
}

export type Section = "baseline" | "evaluation" | "rules" | "tracking" | "mixed" | "executors" | "native-free" | "scaling" | "cluster";

/** Which server answered a load run. */
export interface ServerInfo {
  kind: "service" | "hello-uws" | "hello-node" | "group-commit";
  /** The service's SWITCHYARD_WORKERS (0 = inline). */
  workers?: number;
  native?: boolean;
  /** Its process, for the CPU its threads spend per request (Linux only). */
  pid?: number;
}

export interface LoadFigure {
  id: string;
  section: Section;
  title: string;
  server: ServerInfo;
  /** What `value` counts: requests, or events (items) for bulk bodies: answered, or projected (`projection`). */
  unit: "req/s" | "events/s";
  itemsPerRequest: number;
  /** Offered rate for paced runs. */
  offeredRate?: number;
  connections: number;
  /** Length of each measured run (the mode's, or longer for slow requests). */
  durationSeconds: number;
  runs: LoadResult[];
  /** Median over the runs of rps × itemsPerRequest. */
  value: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number };
  spread: Spread;
  /** Failed requests over all measured runs (socket errors, timeouts, status ≥ 400). */
  errors: number;
  /** Set when the scenario could not run; then there are no runs and the figures are NaN. */
  failure?: string;
  /**
   * Median share of the machine's CPU time (every core, load generator included) left idle during the measured runs
   * (Linux only). Idle cores while a rate is capped mean threads waiting (on each other, on commits), not a CPU limit.
   */
  machineIdleShare?: number;
  /**
   * Median CPU the server's threads spent per item (request or event) during the measured runs, µs (Linux only). For
   * projected figures, over the load and the catch-up after it, per item acknowledged.
   */
  serverCpuUsPerItem?: number;
  /**
   * The same CPU split by thread role (front end, each job worker, the projector, the rest), µs per item, the median
   * of each over the measured runs (Linux only): the ledger of the report is made of these.
   */
  threadCpuUsPerItem?: RoleCpu;
  /**
   * Tracking counted once projected (spec.projected): `value` is then items projected per second, `errors` leaves out
   * the refusals (503 PROJECTION_BEHIND), which are counted here with the lag and catch-up of each run.
   */
  projection?: ProjectionFigure;
}

export interface ScenarioSpec {
  id: string;
  section: Section;
  title: string;
  server: ServerInfo;
  baseUrl: string;
  requests: readonly RequestSpec[];
  /** The status every request must get (checked once before the load). */
  expectedStatus?: number;
  itemsPerRequest?: number;
  rate?: number;
  /** Overrides the mode's connection count (bulk bodies: a few large requests in flight, not fifty). */
  connections?: number;
  /** Measured runs last at least this long (slow requests need a longer window than the mode's shortest). */
  minDurationSeconds?: number;
  /**
   * Count items once projected, not once answered: each run waits for the projection to catch up first, samples its
   * lag during the load, and stops the clock when /health shows it caught up (support/projection.ts).
   */
  projected?: boolean;
  /**
   * False when the scenario just before ran the same code path on the same server (another context size, the paced
   * version of the same mix), so a warm-up run would only cost time.
   */
  warmUp?: boolean;
}

/** A figure for a scenario that could not run (the report says why instead of leaving a hole). */
export function failedFigure(spec: Pick<ScenarioSpec, "id" | "section" | "title" | "server" | "itemsPerRequest" | "connections">, failure: string): LoadFigure {
  const itemsPerRequest = spec.itemsPerRequest ?? 1;
  return {
    id: spec.id,
    section: spec.section,
    title: spec.title,
    server: spec.server,
    unit: itemsPerRequest > 1 ? "events/s" : "req/s",
    itemsPerRequest,
    connections: spec.connections ?? 0,
    durationSeconds: 0,
    runs: [],
    value: Number.NaN,
    rps: Number.NaN,
    latencyMs: { p50: Number.NaN, p90: Number.NaN, p99: Number.NaN },
    spread: spread([]),
    errors: 0,
    failure,
  };
}

/** Checks one request, warms up (not reported), then measures `repeats` runs and keeps their median and spread. */
export async function measure(lab: Lab, spec: ScenarioSpec): Promise<LoadFigure> {
  const itemsPerRequest = spec.itemsPerRequest ?? 1;
  const { mode } = lab;
  try {
    await expectStatus(spec.baseUrl, spec.requests[0]!, spec.expectedStatus ?? 200);
    const load = (durationSeconds: number, amount: number | undefined) =>
      runLoad(
        lab.driver,
        {
          baseUrl: spec.baseUrl,
          requests: spec.requests,
          connections: spec.connections ?? mode.connections,
          durationSeconds,
          ...(spec.rate !== undefined ? { rate: spec.rate } : {}),
          ...(lab.driver !== "wrk" && amount !== undefined ? { amount } : {}),
          ...(spec.projected ? { countRefusals: true } : {}),
        },
        lab.scratchDir,
      );
    const warmup = spec.warmUp === false ? undefined : await load(mode.warmupSeconds, mode.warmupAmount);
    const runs: LoadResult[] = [];
    const idleShares: number[] = [];
    const cpuPerItem: number[] = [];
    const roleCpu: RoleCpu[] = [];
    const projectedRuns: ProjectedRun[] = [];
    const pid = spec.server.pid;
    // A window of a few request latencies is mostly ramp-up (a pooled batch of 1,000-feature answers takes a good
    // part of a second): measure for at least ten median latencies, up to the mode's longest run.
    const adaptive = Math.min(mode.maxDurationSeconds, Math.ceil(((warmup?.latencyMs.p50 ?? 0) * 10) / 1000));
    const duration = Math.max(mode.durationSeconds, spec.minDurationSeconds ?? 0, Number.isFinite(adaptive) ? adaptive : 0);
    for (let repeat = 0; repeat < mode.repeats; repeat++) {
      // What the warm-up or the run before left unprojected must not count against this run.
      if (spec.projected) await waitCaughtUp(spec.baseUrl);
      const before = ifProcReadable(machineTicks);
      const threadsBefore = pid === undefined ? undefined : ifProcReadable(() => threadTicks(pid));
      const sampler = spec.projected ? startLagSampler(spec.baseUrl) : undefined;
      const run = await load(duration, mode.amount);
      const loadEnded = performance.now();
      let items = run.requests * itemsPerRequest;
      if (sampler !== undefined) {
        const [lag, caughtUpAt] = await Promise.all([sampler.stop(), waitCaughtUp(spec.baseUrl)]);
        const projected = projectedRun({
          acknowledgedItems: run.acknowledged * itemsPerRequest,
          refused: run.refused,
          loadSeconds: run.durationSeconds,
          catchUpSeconds: Math.max(0, caughtUpAt - loadEnded) / 1000,
          lagMs: lag.lagMs,
          backlogMax: lag.backlogMax,
        });
        projectedRuns.push(projected);
        items = projected.acknowledgedItems;
        lab.log(
          `${spec.id} run ${repeat + 1}: ${Math.round(projected.acknowledgedPerSecond).toLocaleString("en")} items/s acknowledged over ${projected.loadSeconds.toFixed(2)} s, ` +
            `caught up ${projected.catchUpSeconds.toFixed(2)} s later, lag p99 ${projected.lagP99Ms} ms (${projected.lagSamples} samples), ${projected.refused} refused`,
        );
      }
      runs.push(run);
      const threadsAfter = pid === undefined ? undefined : ifProcReadable(() => threadTicks(pid));
      const after = ifProcReadable(machineTicks);
      if (before !== undefined && after !== undefined && after.total > before.total) idleShares.push(idleShareBetween(before, after));
      if (threadsBefore !== undefined && threadsAfter !== undefined && items > 0) {
        const rows = cpuBetween(threadsBefore, threadsAfter);
        const ms = rows.reduce((sum, thread) => sum + thread.ms, 0);
        cpuPerItem.push((ms * 1000) / items);
        roleCpu.push(roleCpuPerItem(rows, items));
      }
    }
    const projection = spec.projected ? projectionFigure(projectedRuns, median) : undefined;
    const values = projection !== undefined ? projectedRuns.map((run) => run.itemsPerSecond) : runs.map((run) => run.rps * itemsPerRequest);
    const figure: LoadFigure = {
      durationSeconds: duration,
      id: spec.id,
      section: spec.section,
      title: spec.title,
      server: spec.server,
      unit: itemsPerRequest > 1 ? "events/s" : "req/s",
      itemsPerRequest,
      ...(spec.rate !== undefined ? { offeredRate: spec.rate } : {}),
      connections: spec.connections ?? mode.connections,
      runs,
      value: median(values),
      rps: median(runs.map((run) => run.rps)),
      latencyMs: {
        p50: median(runs.map((run) => run.latencyMs.p50)),
        p90: median(runs.map((run) => run.latencyMs.p90)),
        p99: median(runs.map((run) => run.latencyMs.p99)),
      },
      spread: spread(values),
      // Refusals are the service shedding load by design: a projected figure counts them apart (and not their items).
      errors: runs.reduce((sum, run) => sum + run.errors - (projection !== undefined ? run.refused : 0), 0),
      ...(idleShares.length > 0 ? { machineIdleShare: median(idleShares) } : {}),
      ...(cpuPerItem.length > 0 ? { serverCpuUsPerItem: median(cpuPerItem), threadCpuUsPerItem: medianRoleCpu(roleCpu, median) } : {}),
      ...(projection !== undefined ? { projection } : {}),
    };
    lab.log(
      `${spec.id}: ${Math.round(figure.value).toLocaleString("en")} ${figure.unit}${projection !== undefined ? " projected" : ""}, p50 ${figure.latencyMs.p50.toFixed(2)} ms, p99 ${figure.latencyMs.p99.toFixed(2)} ms` +
        (figure.errors > 0 ? `, ${figure.errors} errors` : ""),
    );
    return figure;
  } catch (error) {
    const failure = (error as Error).message ?? String(error);
    lab.log(`${spec.id}: FAILED ${failure}`);
    return failedFigure(spec, failure);
  }
}

/** A reading of /proc, or undefined where it cannot be read (not Linux, or the process is gone). */
function ifProcReadable<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** Authorisation and JSON headers. */
export function bearer(key: string, json = false): Record<string, string> {
  return json ? { Authorization: `Bearer ${key}`, "Content-Type": "application/json" } : { Authorization: `Bearer ${key}` };
}
