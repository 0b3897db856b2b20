/**
 * Tracking is answered once logged and projected afterwards, so a tracking figure counts items once they are
 * projected: the clock runs from the start of the load until GET /health says the projection has caught up
 * (`projection.backlog === 0 && projection.lagMs === 0`). Meanwhile a sampler reads the projection's lag from /health
 * every ~75 ms (one small GET at a time, never overlapping), for the lag's p99 during the load.
 */

/** What GET /health says of the projection. */
export interface ProjectionHealth {
  lagMs: number;
  backlog: number;
}

/** One measured run of a projected scenario. */
export interface ProjectedRun {
  /** Items in requests answered 2xx during the load (refused requests' items are not counted). */
  acknowledgedItems: number;
  /** Requests answered 503 PROJECTION_BEHIND. */
  refused: number;
  /** The load's own length, as the load generator measured it. */
  loadSeconds: number;
  /** From the end of the load until /health first showed the projection caught up. */
  catchUpSeconds: number;
  /** acknowledgedItems / (loadSeconds + catchUpSeconds). */
  itemsPerSecond: number;
  /** acknowledgedItems / loadSeconds: what was acknowledged, whether projected yet or not. */
  acknowledgedPerSecond: number;
  /** Lag samples taken during the load (ms), their p99 and maximum, and the largest backlog seen. */
  lagSamples: number;
  lagP99Ms: number;
  lagMaxMs: number;
  backlogMax: number;
}

/** A projected figure: the medians of its runs, each run kept. */
export interface ProjectionFigure {
  itemsPerSecond: number;
  acknowledgedPerSecond: number;
  loadSeconds: number;
  catchUpSeconds: number;
  lagP99Ms: number;
  /** The largest lag sampled in any run. */
  lagMaxMs: number;
  backlogMax: number;
  /** Requests refused (503 PROJECTION_BEHIND) over all measured runs. */
  refused: number;
  runs: ProjectedRun[];
}

/** Between two lag samples during the load. */
export const LAG_SAMPLE_MS = 75;
/** Between two looks at /health once the load is over (the catch-up clock's resolution). */
const CATCH_UP_POLL_MS = 10;
/** A projection that has not caught up after this long is stuck, not slow: the figure fails instead of hanging. */
export const CATCH_UP_LIMIT_MS = 180_000;

/** Items projected per second: acknowledged items over the load and the catch-up after it. */
export function projectedItemsPerSecond(run: { acknowledgedItems: number; loadSeconds: number; catchUpSeconds: number }): number {
  const seconds = run.loadSeconds + run.catchUpSeconds;
  return seconds > 0 ? run.acknowledgedItems / seconds : Number.NaN;
}

export function isCaughtUp(health: ProjectionHealth): boolean {
  return health.backlog === 0 && health.lagMs === 0;
}

/** Nearest-rank percentile (`share` in 0..1); NaN without values. */
export function percentile(values: readonly number[], share: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))]!;
}

/** GET /health's projection figures; throws when the service does not report them. */
export async function readProjection(baseUrl: string): Promise<ProjectionHealth> {
  const response = await fetch(`${baseUrl}/health`);
  const body = (await response.json()) as { projection?: Partial<ProjectionHealth> };
  const projection = body.projection;
  if (typeof projection?.lagMs !== "number" || typeof projection.backlog !== "number") {
    throw new Error(`GET /health answered ${response.status} without projection.lagMs and projection.backlog`);
  }
  return { lagMs: projection.lagMs, backlog: projection.backlog };
}

/**
 * Polls /health until the projection has caught up; answers when that was first seen (performance.now()). Throws
 * past `limitMs`.
 */
export async function waitCaughtUp(baseUrl: string, limitMs = CATCH_UP_LIMIT_MS): Promise<number> {
  const deadline = performance.now() + limitMs;
  for (;;) {
    const health = await readProjection(baseUrl);
    const seenAt = performance.now();
    if (isCaughtUp(health)) return seenAt;
    if (seenAt > deadline) throw new Error(`the projection had not caught up ${Math.round(limitMs / 1000)} s after the load (lag ${health.lagMs} ms, backlog ${health.backlog})`);
    await new Promise((resolve) => setTimeout(resolve, CATCH_UP_POLL_MS));
  }
}

export interface LagSampler {
  /** Stops sampling; answers what was sampled (an in-flight sample is awaited). */
  stop(): Promise<{ lagMs: number[]; backlogMax: number; failures: number }>;
}

/** Samples /health every `intervalMs`, skipping a tick while the previous sample is still out (it must stay cheap). */
export function startLagSampler(baseUrl: string, intervalMs = LAG_SAMPLE_MS): LagSampler {
  const lagMs: number[] = [];
  let backlogMax = 0;
  let failures = 0;
  let inFlight: Promise<void> | undefined;
  const sample = () => {
    if (inFlight !== undefined) return;
    inFlight = readProjection(baseUrl)
      .then((health) => {
        lagMs.push(health.lagMs);
        backlogMax = Math.max(backlogMax, health.backlog);
      })
      .catch(() => {
        failures++;
      })
      .finally(() => {
        inFlight = undefined;
      });
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await inFlight;
      return { lagMs, backlogMax, failures };
    },
  };
}

/** One run's figures from what the load generator and the sampler saw. */
export function projectedRun(parts: {
  acknowledgedItems: number;
  refused: number;
  loadSeconds: number;
  catchUpSeconds: number;
  lagMs: readonly number[];
  backlogMax: number;
}): ProjectedRun {
  const { acknowledgedItems, loadSeconds, catchUpSeconds } = parts;
  return {
    acknowledgedItems,
    refused: parts.refused,
    loadSeconds,
    catchUpSeconds,
    itemsPerSecond: projectedItemsPerSecond({ acknowledgedItems, loadSeconds, catchUpSeconds }),
    acknowledgedPerSecond: loadSeconds > 0 ? acknowledgedItems / loadSeconds : Number.NaN,
    lagSamples: parts.lagMs.length,
    lagP99Ms: percentile(parts.lagMs, 0.99),
    lagMaxMs: parts.lagMs.length === 0 ? Number.NaN : Math.max(...parts.lagMs),
    backlogMax: parts.backlogMax,
  };
}

/** Medians over the runs (as every load figure is a median), the worst lag and backlog, the refusals summed. */
export function projectionFigure(runs: readonly ProjectedRun[], median: (values: readonly number[]) => number): ProjectionFigure {
  const of = (pick: (run: ProjectedRun) => number) => median(runs.map(pick));
  return {
    itemsPerSecond: of((run) => run.itemsPerSecond),
    acknowledgedPerSecond: of((run) => run.acknowledgedPerSecond),
    loadSeconds: of((run) => run.loadSeconds),
    catchUpSeconds: of((run) => run.catchUpSeconds),
    lagP99Ms: of((run) => run.lagP99Ms),
    lagMaxMs: runs.length === 0 ? Number.NaN : Math.max(...runs.map((run) => run.lagMaxMs)),
    backlogMax: runs.length === 0 ? Number.NaN : Math.max(...runs.map((run) => run.backlogMax)),
    refused: runs.reduce((sum, run) => sum + run.refused, 0),
    runs: [...runs],
  };
}

/** A projected figure's lag, catch-up and refusals, in the words the report's tables use. */
export function projectionSummary(projection: ProjectionFigure): string {
  const lag = Number.isFinite(projection.lagP99Ms) ? `${Math.round(projection.lagP99Ms).toLocaleString("en")} ms` : "—";
  const catchUp = Number.isFinite(projection.catchUpSeconds) ? `${projection.catchUpSeconds.toFixed(2)} s` : "—";
  return `projection lag p99 ${lag} during the load, caught up ${catchUp} after it${projection.refused > 0 ? `, ${projection.refused.toLocaleString("en")} requests refused` : ""}`;
}
