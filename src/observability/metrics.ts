import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * Prometheus metrics (`GET /metrics`). The request path only bumps plain numbers in a per-route meter (no label
 * hashing, no allocation); prom-client reads them when scraped, through `collect` callbacks and one custom
 * histogram. prom-client's own `observe` hashes the label set on every call, which on the evaluation path would
 * cost more than the cached answer it measures.
 */

/** Upper bounds (seconds) of the request latency buckets. */
const LATENCY_BOUNDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** One route's counts: requests per status class and a latency histogram, all plain numbers. */
export class RouteMeter {
  /** Index 1..5: 1xx..5xx. */
  readonly statuses = new Float64Array(6);
  readonly buckets = new Float64Array(LATENCY_BOUNDS.length + 1);
  sum = 0;
  count = 0;

  constructor(
    readonly method: string,
    readonly route: string,
  ) {}

  observe(status: number, seconds: number): void {
    const klass = (status / 100) | 0;
    this.statuses[klass > 5 ? 5 : klass]!++;
    let index = 0;
    while (index < LATENCY_BOUNDS.length && seconds > LATENCY_BOUNDS[index]!) index++;
    this.buckets[index]!++;
    this.sum += seconds;
    this.count++;
  }
}

/** A histogram whose values come from meters at scrape time, formatted by prom-client's registry. */
class MeterHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly meters: () => Iterable<RouteMeter>,
  ) {}

  get(): { name: string; help: string; type: string; aggregator: string; values: { metricName: string; labels: Record<string, string | number>; value: number }[] } {
    const values: { metricName: string; labels: Record<string, string | number>; value: number }[] = [];
    for (const meter of this.meters()) {
      if (meter.count === 0) continue;
      const labels = { method: meter.method, route: meter.route };
      let cumulative = 0;
      LATENCY_BOUNDS.forEach((bound, index) => {
        cumulative += meter.buckets[index]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: bound }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: "+Inf" }, value: meter.count });
      values.push({ metricName: `${this.name}_sum`, labels, value: meter.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: meter.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/** Routes whose requests are evaluations (counted again under their own name, for dashboards). */
const EVALUATION_ROUTES = new Set(["/features/evaluated", "/features/enabled"]);

export class Metrics {
  readonly registry = new Registry();
  private readonly meters = new Map<unknown, RouteMeter>();
  /** Tracking requests and the batches (one transaction, or one replicated message) they travelled in. */
  readonly tracking = { batches: 0, requests: 0 };

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "switchyard_" });
    const meters = () => this.meters.values();
    this.registry.registerMetric(
      new MeterHistogram("switchyard_http_request_duration_seconds", "Time from routing to the answer (or the start of a stream), per route.", meters) as unknown as Histogram,
    );
    new Counter({
      name: "switchyard_http_requests_total",
      help: "Requests per route and status class.",
      labelNames: ["method", "route", "status"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const meter of meters()) {
          for (let klass = 1; klass <= 5; klass++) if (meter.statuses[klass]! > 0) this.inc({ method: meter.method, route: meter.route, status: `${klass}xx` }, meter.statuses[klass]!);
        }
      },
    });
    new Counter({
      name: "switchyard_evaluation_requests_total",
      help: "Evaluation requests answered (/features/evaluated and /features/enabled), any status.",
      labelNames: ["route"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const meter of meters()) if (EVALUATION_ROUTES.has(meter.route) && meter.count > 0) this.inc({ route: meter.route }, meter.count);
      },
    });
    const tracking = this.tracking;
    new Counter({
      name: "switchyard_tracking_batches_total",
      help: "Batches tracking requests were stored in (a shared transaction, or in cluster mode one replicated message).",
      registers: [this.registry],
      collect() {
        this.reset();
        if (tracking.batches > 0) this.inc(tracking.batches);
      },
    });
    new Counter({
      name: "switchyard_tracking_requests_total",
      help: "Tracking requests handed to a batch.",
      registers: [this.registry],
      collect() {
        this.reset();
        if (tracking.requests > 0) this.inc(tracking.requests);
      },
    });
  }

  /** The meter of a route (`key` identifies it; `route` is its pattern, never a concrete path with ids or keys). */
  meter(key: unknown, method: string, route: string): RouteMeter {
    let meter = this.meters.get(key);
    if (!meter) this.meters.set(key, (meter = new RouteMeter(method, route)));
    return meter;
  }

  /** A gauge whose value is read when scraped. */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** A counter whose total is read when scraped (kept by whoever counts, as plain numbers). */
  counter(name: string, help: string, read: () => number): void {
    new Counter({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.reset();
        const total = read();
        if (total > 0) this.inc(total);
      },
    });
  }

  /** A gauge with labels, its values read when scraped. */
  labelledGauge(name: string, help: string, labelNames: string[], read: () => [Record<string, string>, number][]): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [labels, value] of read()) this.set(labels, value);
      },
    });
  }

  /** A prom-client histogram for rare events (cluster publishes), observed directly. */
  histogram(name: string, help: string, buckets: number[], labelNames: string[] = []): Histogram {
    return new Histogram({ name, help, buckets, labelNames, registers: [this.registry] });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
