/**
 * The report's data: what was measured (figures) and what is derived from it (each figure against its baseline,
 * the targets, the executor verdicts, native vs native-free, scaling curves). The JSON file is this object.
 */
import type { BulkRecordsFigure } from "../baselines/bulk-records.js";
import type { LmdbPutsFigure } from "../baselines/lmdb-puts.js";
import type { EvaluationAloneFigure } from "../evaluation/write-answer.js";
import { BULK_CEILING_ID, EVENT_RECORDS_ID, GROUP_COMMIT_ID, HELLO_IDS } from "../baselines/transport.js";
import { NATIVE_FREE_PAIRS } from "../runtime/native-free.js";
import { contextSizeId, DEFAULT_CONTEXT_SIZE, ENABLED_ID, evaluateId, repeatedEvaluateId } from "../serving/evaluation-routes.js";
import type { ClusterSection } from "../cluster/model.js";
import type { PeersSection } from "../peers/model.js";
import type { StageFigure } from "../serving/evaluation-stages.js";
import { MIXED_MAX_ID, MIXED_PACED_ID } from "../serving/mixed.js";
import { RULES_ETAG_ID, RULES_ID } from "../serving/rules-route.js";
import { OFREP_PAIRS } from "../serving/ofrep-routes.js";
import { BULK_ID, BULK_MIXED_ID, EVENT_ID, TRACKING_API_EVENT_ID } from "../serving/tracking-routes.js";
import type { StoredDataPoint } from "../storage/stored-data.js";
import type { LoadFigure } from "../support/lab.js";
import { verdict, type Comparison } from "./comparison.js";
import { buildLedger, type Ledger } from "./ledger.js";
import { buildMicroComparisons } from "./micro-comparisons.js";
import { physicalLimitTargets } from "./physical-limit.js";
import { projectionSummary } from "../support/projection.js";
import type { MicroFigure } from "../support/micro.js";
import type { ModeName } from "../support/modes.js";
import { ARRANGEMENTS, executorFigureId, type Workload } from "../workers/executor-arrangements.js";

export const REPORT_SCHEMA = 1;

export interface ReportMeta {
  date: string;
  host: string;
  mode: ModeName;
  command: string;
  startedAt: string;
  finishedAt: string;
  elapsedSeconds: number;
  node: string;
  platform: string;
  cpus: { count: number; model: string };
  memoryBytes: number;
  loadAverage: { atStart: number[]; atEnd: number[] };
  driver: "wrk" | "autocannon" | "probe";
  load: { connections: number; threads: number; durationSeconds: number; warmupSeconds: number; repeats: number; amount?: number };
  notes: string[];
}

export type { Comparison, Verdict } from "./comparison.js";

export interface ExecutorVerdict {
  workload: Workload;
  rows: { arrangement: string; workers: number; figureId: string; value: number; unit: string; p99Ms: number }[];
  fastest: string | undefined;
}

export interface NativeFreeRow {
  id: string;
  label: string;
  native: number;
  nativeFree: number;
  unit: string;
  ratio: number;
}

export interface CurvePoint {
  x: number;
  figureId: string;
  value: number;
  p99Ms: number;
  /** value relative to the curve's first point. */
  relative: number;
}

export interface StartupPoint {
  label: string;
  startupMs: number;
}

export interface BenchReport {
  schema: number;
  meta: ReportMeta;
  micro: MicroFigure[];
  microComparisons: Comparison[];
  baselines: {
    lmdbPuts: LmdbPutsFigure | { failure: string };
    /** Raw puts of every record a bulk stores: context for the bulk figure, not its target's baseline. */
    bulkRecords: BulkRecordsFigure | { failure: string };
    /** Evaluation alone in one thread, per feature count: what bounds a worker's rate whatever else costs. */
    evaluationAlone: EvaluationAloneFigure[] | { failure: string };
    eventRecordBytes: { msgpackBytes: number; jsonBytes: number };
  };
  load: LoadFigure[];
  comparisons: Comparison[];
  targets: Comparison[];
  executors: ExecutorVerdict[];
  nativeFree: { available: boolean; failure?: string; rows: NativeFreeRow[] };
  scaling: {
    features: CurvePoint[];
    contextSize: CurvePoint[];
    workers: CurvePoint[];
    storedData: StoredDataPoint[];
    startup: StartupPoint[];
  };
  /** Output of other benchmark scripts found in bench/ and run as they are. */
  extras: { name: string; exitCode: number | null; output: string }[];
  /** Server CPU per request, stage by stage (distinct contexts, profiled runs). */
  stages: StageFigure[];
  /** CPU per request of each thread beside the bare same-bytes servers, with the cost goals (ledger.ts). */
  ledger: Ledger;
  /** Cluster mode against a standalone node of the same run, or why it was not measured. */
  cluster: ClusterSection;
  /** Switchyard against Unleash and the Unleash Proxy serving the same flags, or why they were not measured. */
  peers: PeersSection;
}

/** What the runner gathered; `buildReport` derives the rest. */
export interface Measurements {
  meta: ReportMeta;
  micro: MicroFigure[];
  lmdbPuts: LmdbPutsFigure | { failure: string };
  bulkRecords: BulkRecordsFigure | { failure: string };
  evaluationAlone: EvaluationAloneFigure[] | { failure: string };
  eventRecordBytes: { msgpackBytes: number; jsonBytes: number };
  load: LoadFigure[];
  nativeFreeFailure: string | undefined;
  storedData: StoredDataPoint[];
  startup: StartupPoint[];
  extras: BenchReport["extras"];
  stages: StageFigure[];
  cluster: ClusterSection;
  peers: PeersSection;
}

const LMDB_ID = "lmdb-raw-puts";

/**
 * The baseline each load figure is compared with: the bare server of its transport and method; for bulk (items
 * projected per second) the bulk ceiling, the group-commit server putting each item on its own.
 */
function baselineOf(figure: LoadFigure): string | undefined {
  const ofrep = OFREP_PAIRS.find((pair) => pair.id === figure.id);
  if (ofrep !== undefined) return ofrep.baseline;
  if (figure.id === MIXED_PACED_ID) return MIXED_MAX_ID;
  if (figure.id === ENABLED_ID) return evaluateId(50);
  if (figure.id === EVENT_ID || figure.id === TRACKING_API_EVENT_ID) return GROUP_COMMIT_ID;
  if (figure.id === BULK_MIXED_ID || figure.id === BULK_ID) return BULK_CEILING_ID;
  if (figure.server.kind === "hello-uws") return figure.id === HELLO_IDS.uws.get ? undefined : HELLO_IDS.uws.get;
  if (figure.id === EVENT_RECORDS_ID) return GROUP_COMMIT_ID;
  if (figure.server.kind === "group-commit") return figure.id === BULK_CEILING_ID ? LMDB_ID : HELLO_IDS.uws.post;
  if (figure.server.kind === "hello-node") return figure.id === HELLO_IDS.node.get ? HELLO_IDS.uws.get : HELLO_IDS.uws.post;
  if (figure.unit === "events/s") return figure.server.native === false ? BULK_ID : BULK_CEILING_ID;
  const hello = figure.server.native === false ? HELLO_IDS.node : HELLO_IDS.uws;
  const isPost = figure.id.includes("event") || figure.id.includes("bulk");
  return isPost ? hello.post : hello.get;
}

interface LoadTarget {
  minRatio: number;
  /** A latency bound as well (ms p99). */
  maxP99Ms?: number;
  text: string;
}

/** Load targets of the issue: figure id → minimum ratio to its baseline. */
const LOAD_TARGETS: Record<string, LoadTarget> = {
  [evaluateId(10)]: { minRatio: 0.6, text: "≥ 60 % of hello-world GET" },
  [evaluateId(50)]: { minRatio: 0.4, text: "≥ 40 % of hello-world GET" },
  [evaluateId(200)]: { minRatio: 0.15, text: "≥ 15 % of hello-world GET" },
  [evaluateId(1000)]: { minRatio: 0.03, maxP99Ms: 50, text: "≥ 3 % of hello-world GET, p99 < 50 ms" },
  [ENABLED_ID]: { minRatio: 0.8, text: "≥ 80 % of /features/evaluated at 50 features" },
  [EVENT_ID]: { minRatio: 0.8, text: "≥ 80 % of the group-commit ceiling" },
  [BULK_ID]: { minRatio: 0.85, text: "≥ 85 % of the bulk ceiling, items projected per second" },
  [BULK_MIXED_ID]: { minRatio: 0.85, text: "≥ 85 % of the bulk ceiling, items projected per second" },
  ...Object.fromEntries(OFREP_PAIRS.map((pair) => [pair.id, { minRatio: pair.target, text: pair.text }])),
};
/** The least ratio to its baseline that a load figure's target asks for; undefined for figures without one. */
export function loadTargetRatio(id: string): number | undefined {
  return LOAD_TARGETS[id]?.minRatio;
}

export const P99_TARGET_MS = 5;
/** Server CPU per request at 50 features, all threads (µs). */
export const STAGE_TARGET_US = 25;
export const STAGE_TARGET_ID = "cpu-per-request-50";

export function buildReport(measured: Measurements): BenchReport {
  const byId = new Map(measured.load.map((figure) => [figure.id, figure]));
  const lmdbValue = "value" in measured.lmdbPuts ? measured.lmdbPuts.value : Number.NaN;
  const valueOf = (id: string | undefined): number => (id === undefined ? Number.NaN : id === LMDB_ID ? lmdbValue : (byId.get(id)?.value ?? Number.NaN));
  const labelOf = (id: string | undefined): string =>
    id === undefined ? "—" : id === LMDB_ID ? `raw LMDB puts (${LMDB_ID})` : `${byId.get(id)?.title ?? id} (${id})`;

  const comparisons: Comparison[] = measured.load.map((figure) => {
    if (figure.id === MIXED_PACED_ID) {
      // Latency is what counts at a set rate: p99 against the target, next to the unpaced run's p99.
      const unpaced = byId.get(MIXED_MAX_ID);
      const p99 = figure.latencyMs.p99;
      return {
        id: figure.id,
        label: `${figure.title} — p99 latency`,
        value: p99,
        unit: "ms p99",
        baselineId: MIXED_MAX_ID,
        baselineLabel: `p99 of the unpaced mix (${MIXED_MAX_ID})`,
        baselineValue: unpaced?.latencyMs.p99 ?? Number.NaN,
        ratio: p99 / (unpaced?.latencyMs.p99 ?? Number.NaN),
        ratioStyle: "times",
        target: `p99 < ${P99_TARGET_MS} ms`,
        verdict: verdict(Number.isFinite(p99) ? p99 < P99_TARGET_MS && figure.errors === 0 : false),
      };
    }
    const baselineId = baselineOf(figure);
    const target = LOAD_TARGETS[figure.id];
    const ratio = figure.value / valueOf(baselineId);
    return {
      id: figure.id,
      label: figure.projection === undefined ? figure.title : `${figure.title} (${projectionSummary(figure.projection)})`,
      value: figure.value,
      unit: figure.unit,
      baselineId,
      baselineLabel: labelOf(baselineId),
      baselineValue: valueOf(baselineId),
      ratio,
      ratioStyle: "percent",
      target: target?.text,
      verdict:
        target === undefined
          ? "—"
          : verdict(Number.isFinite(ratio) && ratio >= target.minRatio && figure.errors === 0 && (target.maxP99Ms === undefined || figure.latencyMs.p99 < target.maxP99Ms)),
    };
  });

  const microComparisons = buildMicroComparisons(measured.micro);
  const targetIds = [evaluateId(10), evaluateId(50), evaluateId(200), evaluateId(1000), ENABLED_ID, EVENT_ID, BULK_ID, BULK_MIXED_ID, MIXED_PACED_ID];
  const stageAt50 = measured.stages.find((stage) => stage.features === 50);
  const targets = [
    ...targetIds.map(
      (id) =>
        comparisons.find((comparison) => comparison.id === id) ?? {
          id,
          label: `${id} (not measured)`,
          value: Number.NaN,
          unit: "",
          baselineId: undefined,
          baselineLabel: "—",
          baselineValue: Number.NaN,
          ratio: Number.NaN,
          ratioStyle: "percent" as const,
          target: id === MIXED_PACED_ID ? `p99 < ${P99_TARGET_MS} ms` : LOAD_TARGETS[id]?.text,
          verdict: "MISS" as const,
        },
    ),
    {
      id: STAGE_TARGET_ID,
      label: "server CPU per request, all threads, 50 features, distinct contexts (profiled run)",
      value: stageAt50?.totalUs ?? Number.NaN,
      unit: "µs",
      baselineId: undefined,
      baselineLabel: "—",
      baselineValue: Number.NaN,
      ratio: Number.NaN,
      ratioStyle: "times" as const,
      target: `≤ ${STAGE_TARGET_US} µs`,
      verdict: verdict(stageAt50 === undefined ? false : stageAt50.totalUs <= STAGE_TARGET_US),
    },
    ...physicalLimitTargets(byId),
    ...microComparisons.filter((comparison) => comparison.target !== undefined),
  ];

  const executors = (["evaluation", "tracking", "bulk"] as const).map((workload): ExecutorVerdict => {
    const rows = ARRANGEMENTS.map((arrangement) => {
      const figureId = executorFigureId(arrangement, workload);
      const figure = byId.get(figureId);
      return {
        arrangement: arrangement.name,
        workers: arrangement.workers,
        figureId,
        value: figure?.value ?? Number.NaN,
        unit: figure?.unit ?? (workload === "bulk" ? "events/s" : "req/s"),
        p99Ms: figure?.latencyMs.p99 ?? Number.NaN,
      };
    });
    const measuredRows = rows.filter((row) => Number.isFinite(row.value));
    const fastest = measuredRows.length === 0 ? undefined : measuredRows.reduce((best, row) => (row.value > best.value ? row : best)).arrangement;
    return { workload, rows, fastest };
  });

  const nativeFreeRows = NATIVE_FREE_PAIRS.map((pair) => {
    const native = byId.get(pair.native);
    const nativeFree = byId.get(pair.id);
    return {
      id: pair.id,
      label: pair.title,
      native: native?.value ?? Number.NaN,
      nativeFree: nativeFree?.value ?? Number.NaN,
      unit: native?.unit ?? nativeFree?.unit ?? "req/s",
      ratio: (nativeFree?.value ?? Number.NaN) / (native?.value ?? Number.NaN),
    };
  });

  const curve = (points: { x: number; id: string }[]): CurvePoint[] => {
    const present = points.filter((point) => byId.has(point.id));
    const first = present.length > 0 ? valueOf(present[0]!.id) : Number.NaN;
    return present.map((point) => ({
      x: point.x,
      figureId: point.id,
      value: valueOf(point.id),
      p99Ms: byId.get(point.id)?.latencyMs.p99 ?? Number.NaN,
      relative: valueOf(point.id) / first,
    }));
  };
  const contextSizes = [...new Set([...measured.load.filter((figure) => figure.id.startsWith("evaluate-50-context-")).map((figure) => Number(figure.id.slice("evaluate-50-context-".length))), DEFAULT_CONTEXT_SIZE])].sort((a, b) => a - b);

  return {
    schema: REPORT_SCHEMA,
    meta: measured.meta,
    micro: measured.micro,
    microComparisons,
    baselines: { lmdbPuts: measured.lmdbPuts, bulkRecords: measured.bulkRecords, evaluationAlone: measured.evaluationAlone, eventRecordBytes: measured.eventRecordBytes },
    load: measured.load,
    comparisons,
    targets,
    executors,
    nativeFree: {
      available: measured.nativeFreeFailure === undefined,
      ...(measured.nativeFreeFailure !== undefined ? { failure: measured.nativeFreeFailure } : {}),
      rows: nativeFreeRows,
    },
    scaling: {
      features: curve(measured.load.filter((figure) => /^evaluate-\d+$/.test(figure.id)).map((figure) => ({ x: Number(figure.id.slice("evaluate-".length)), id: figure.id }))),
      contextSize: curve(contextSizes.map((size) => ({ x: size, id: size === DEFAULT_CONTEXT_SIZE ? repeatedEvaluateId(50) : contextSizeId(size) }))),
      workers: curve(ARRANGEMENTS.map((arrangement) => ({ x: arrangement.workers, id: executorFigureId(arrangement, "evaluation") }))),
      storedData: measured.storedData,
      startup: measured.startup,
    },
    extras: measured.extras,
    stages: measured.stages,
    ledger: buildLedger(byId, measured.stages),
    cluster: measured.cluster,
    peers: measured.peers,
  };
}

/** Figure ids every complete report has (the smoke test checks them). */
export const CORE_FIGURE_IDS = [
  HELLO_IDS.uws.get,
  HELLO_IDS.uws.post,
  HELLO_IDS.node.get,
  HELLO_IDS.node.post,
  GROUP_COMMIT_ID,
  BULK_CEILING_ID,
  evaluateId(10),
  evaluateId(50),
  repeatedEvaluateId(10),
  repeatedEvaluateId(50),
  ENABLED_ID,
  RULES_ID,
  RULES_ETAG_ID,
  EVENT_ID,
  BULK_ID,
  BULK_MIXED_ID,
  TRACKING_API_EVENT_ID,
  MIXED_MAX_ID,
  MIXED_PACED_ID,
] as const;
