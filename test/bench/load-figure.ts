/** A load figure for report tests: a measured value with plausible defaults for everything else. */
import type { LoadFigure, ServerInfo } from "../../bench/support/lab.js";
import { spread } from "../../bench/support/stats.js";

export function figure(id: string, value: number, server: ServerInfo, extra: Partial<LoadFigure> = {}): LoadFigure {
  return {
    id,
    section: "evaluation",
    title: id,
    server,
    unit: "req/s",
    itemsPerRequest: 1,
    connections: 50,
    durationSeconds: 5,
    runs: [],
    value,
    rps: value,
    latencyMs: { p50: 1, p90: 2, p99: 3 },
    spread: spread([value]),
    errors: 0,
    ...extra,
  };
}
