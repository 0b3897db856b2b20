/**
 * The service's own view of a window, from `GET /metrics`: each route's latency histogram (routing to answer, so no
 * client or kernel queueing in it) and the main thread's event-loop delay. Scraped at the start and end of a window:
 * the histograms are cumulative (the difference is the window's), prom-client resets the loop-delay monitor on
 * every scrape (the end scrape is the window's).
 */
const DURATION = "switchyard_http_request_duration_seconds_bucket";
/** prom-client's loop-delay monitor period (its default, which the service keeps): its figures include it. */
const LOOP_MONITOR_RESOLUTION_MS = 10;

export interface Scrape {
  /** Cumulative count per route and upper bound (seconds; Infinity for +Inf). */
  buckets: Map<string, Map<number, number>>;
  loopDelayP99Ms: number;
}

/** Reads the metrics of the service at `url`. */
export async function scrape(url: string, adminToken: string): Promise<Scrape> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })).text();
  const buckets = new Map<string, Map<number, number>>();
  let loopDelayP99Ms = Number.NaN;
  for (const line of text.split("\n")) {
    if (line.startsWith(DURATION)) {
      const match = /route="([^"]*)".*le="([^"]*)"\}\s+(\S+)/.exec(line);
      if (match === null) continue;
      const [, route, le, value] = match as unknown as [string, string, string, string];
      const byBound = buckets.get(route) ?? new Map<number, number>();
      byBound.set(le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le), Number(value));
      buckets.set(route, byBound);
    } else if (line.startsWith("switchyard_nodejs_eventloop_lag_p99_seconds ")) loopDelayP99Ms = Math.max(0, Math.round(Number(line.split(" ")[1]) * 100_000 - LOOP_MONITOR_RESOLUTION_MS * 100) / 100);
  }
  return { buckets, loopDelayP99Ms };
}

/**
 * The upper bound (ms) of the histogram bucket holding the 99th percentile of `route`'s requests between two scrapes:
 * "p99 ≤ this". Undefined when the route had no requests.
 */
export function p99Bound(before: Scrape, after: Scrape, route: string): number | undefined {
  const end = after.buckets.get(route);
  if (end === undefined) return undefined;
  const start = before.buckets.get(route) ?? new Map<number, number>();
  const bounds = [...end.keys()].sort((a, b) => a - b);
  const total = end.get(Number.POSITIVE_INFINITY)! - (start.get(Number.POSITIVE_INFINITY) ?? 0);
  if (total <= 0) return undefined;
  for (const bound of bounds) if (end.get(bound)! - (start.get(bound) ?? 0) >= 0.99 * total) return bound * 1000;
  return Number.POSITIVE_INFINITY;
}
