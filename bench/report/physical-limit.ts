/**
 * Issue 33's targets: evaluation against the physical limit, a bare uWebSockets.js server sending the very same answer
 * bytes for the same request in the same run (`hello-uws-get-N-features`), rather than against a 60-byte hello-world;
 * and what the machine leaves unused under that load. The hello-world rows stay in the report beside these.
 */
import { answerTransportId } from "../baselines/transport.js";
import { evaluateId } from "../serving/evaluation-routes.js";
import type { LoadFigure } from "../support/lab.js";
import { verdict, type Comparison } from "./comparison.js";

export const SAME_BYTES_TARGETS = [
  { features: 10, minRatio: 0.75 },
  { features: 50, minRatio: 0.75 },
  { features: 1000, minRatio: 0.6, maxP99Ms: 25 },
];
/** Most of the machine left idle under evaluate-10 and -50 load (load generator included). */
const MAX_IDLE_PERCENT = 10;
/** Server CPU per request at 50 features, all threads, from /proc during the unprofiled run (µs). */
const MAX_CPU_US_AT_50 = 30;
export const UNPROFILED_CPU_ID = "cpu-per-request-50-unprofiled";

function row(fields: Omit<Comparison, "ratioStyle"> & { ratioStyle?: Comparison["ratioStyle"] }): Comparison {
  return { ratioStyle: "percent", ...fields };
}

export function physicalLimitTargets(byId: ReadonlyMap<string, LoadFigure>): Comparison[] {
  const rows: Comparison[] = [];
  for (const { features, minRatio, maxP99Ms } of SAME_BYTES_TARGETS) {
    const figure = byId.get(evaluateId(features));
    const limit = byId.get(answerTransportId(features));
    const value = figure?.value ?? Number.NaN;
    const ratio = value / (limit?.value ?? Number.NaN);
    const p99 = figure?.latencyMs.p99 ?? Number.NaN;
    rows.push(
      row({
        id: `${evaluateId(features)}-same-bytes`,
        label: `GET /features/evaluated, ${features} features, distinct contexts, against the same answer bytes${maxP99Ms === undefined || !Number.isFinite(p99) ? "" : ` (p99 ${p99.toFixed(1)} ms)`}`,
        value,
        unit: figure?.unit ?? "req/s",
        baselineId: answerTransportId(features),
        baselineLabel: `${limit?.title ?? "bare uWebSockets.js GET sending the same answer bytes"} (${answerTransportId(features)})`,
        baselineValue: limit?.value ?? Number.NaN,
        ratio,
        target: `≥ ${minRatio * 100} % of the same answer bytes${maxP99Ms === undefined ? "" : `, p99 < ${maxP99Ms} ms`} (issue 33)`,
        verdict: verdict(Number.isFinite(ratio) && ratio >= minRatio && figure!.errors === 0 && (maxP99Ms === undefined || p99 < maxP99Ms)),
      }),
    );
  }
  for (const features of [10, 50]) {
    const idle = byId.get(evaluateId(features))?.machineIdleShare;
    const percent = idle === undefined ? Number.NaN : idle * 100;
    rows.push(
      row({
        id: `${evaluateId(features)}-idle`,
        label: `machine idle under GET /features/evaluated, ${features} features (load generator included)`,
        value: percent,
        unit: "% idle",
        baselineId: undefined,
        baselineLabel: "—",
        baselineValue: Number.NaN,
        ratio: Number.NaN,
        ratioStyle: "times",
        target: `≤ ${MAX_IDLE_PERCENT} % (issue 33)`,
        verdict: verdict(Number.isFinite(percent) ? percent <= MAX_IDLE_PERCENT : false),
      }),
    );
  }
  const cpu = byId.get(evaluateId(50))?.serverCpuUsPerItem ?? Number.NaN;
  rows.push(
    row({
      id: UNPROFILED_CPU_ID,
      label: "server CPU per request, all threads, 50 features, distinct contexts (unprofiled run, from /proc)",
      value: cpu,
      unit: "µs",
      baselineId: undefined,
      baselineLabel: "—",
      baselineValue: Number.NaN,
      ratio: Number.NaN,
      ratioStyle: "times",
      target: `≤ ${MAX_CPU_US_AT_50} µs (issue 33)`,
      verdict: verdict(Number.isFinite(cpu) ? cpu <= MAX_CPU_US_AT_50 : false),
    }),
  );
  return rows;
}
