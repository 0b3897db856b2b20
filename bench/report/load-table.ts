/** The tables of load figures and curves that several sections of the report share. */
import type { LoadFigure } from "../support/lab.js";
import { count, isNumber, ms, shorten, table } from "./format.js";
import type { CurvePoint } from "./model.js";

function spreadText(figure: LoadFigure): string {
  if (figure.runs.length < 2) return `n=${figure.runs.length}`;
  return `±${(figure.spread.percent / 2).toFixed(1)} % (${count(figure.spread.min)}–${count(figure.spread.max)}, n=${figure.runs.length})`;
}

export function loadTable(figures: readonly LoadFigure[]): string {
  if (figures.length === 0) return "_Not measured in this mode._";
  return table(
    ["scenario", "id", "value", "p50", "p90", "p99", "spread", "errors", "connections × seconds", "server CPU", "machine idle", "server"],
    figures.map((figure) => [
      figure.title,
      figure.id,
      figure.failure !== undefined
        ? `failed: ${shorten(figure.failure)}`
        : `${count(figure.value)} ${figure.unit}${figure.projection !== undefined ? " projected" : ""}${figure.offeredRate !== undefined ? ` (offered ${count(figure.offeredRate)} req/s)` : ""}`,
      ms(figure.latencyMs.p50),
      ms(figure.latencyMs.p90),
      ms(figure.latencyMs.p99),
      spreadText(figure),
      String(figure.errors),
      `${figure.connections} × ${figure.durationSeconds} s`,
      isNumber(figure.serverCpuUsPerItem) ? `${figure.serverCpuUsPerItem.toFixed(figure.serverCpuUsPerItem < 10 ? 2 : 1)} µs/${figure.itemsPerRequest > 1 ? "event" : "req"}` : "—",
      isNumber(figure.machineIdleShare) ? `${(figure.machineIdleShare * 100).toFixed(0)} %` : "—",
      figure.server.kind === "service"
        ? `${figure.server.native === false ? "native-free" : "native"}, ${figure.server.workers === 0 ? "inline" : `pool ${figure.server.workers}`}`
        : figure.server.kind,
    ]),
  );
}

export function curveTable(xLabel: string, points: readonly CurvePoint[], unit = "req/s"): string {
  if (points.length === 0) return "_Not measured._";
  return table(
    [xLabel, unit, "p99", "relative to the first point"],
    points.map((point) => [String(point.x), count(point.value), ms(point.p99Ms), isNumber(point.relative) ? `${(point.relative * 100).toFixed(point.relative < 0.1 ? 1 : 0)} %` : "—"]),
  );
}
