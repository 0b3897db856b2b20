/**
 * The ledger: CPU per request of each thread of the service (front end, each job worker, the projector, the rest),
 * read from /proc over whole unprofiled runs, beside the bare server sending the same bytes or committing the same
 * bodies; the ratio between them; the ceiling the front-end thread sets (one thread takes every request, so 1e6 / its
 * µs per request is the most it can answer a second however many workers there are); the goals of the cost work
 * checked against the run.
 */
import { answerTransportId, BULK_CEILING_ID, GROUP_COMMIT_ID } from "../baselines/transport.js";
import { ENABLED_ID, evaluateId } from "../serving/evaluation-routes.js";
import { OFREP_PAIRS } from "../serving/ofrep-routes.js";
import { BULK_MIXED_ID, EVENT_ID } from "../serving/tracking-routes.js";
import type { LoadFigure } from "../support/lab.js";
import type { RoleCpu } from "../support/thread-cpu.js";
import type { StageFigure } from "../serving/evaluation-stages.js";
import { verdict, type Verdict } from "./comparison.js";
import { ledgerFloors, type LedgerFloor } from "./ledger-floors.js";

export interface LedgerRow {
  id: string;
  label: string;
  /** What one unit is: a request, or an item of a bulk body. */
  unit: "request" | "item";
  service: RoleCpu | undefined;
  baselineId: string;
  baselineLabel: string;
  baseline: RoleCpu | undefined;
  /** service.total / baseline.total. */
  ratio: number;
  /** service.frontEnd / baseline.frontEnd. */
  frontEndRatio: number;
  /** 1e6 / service.frontEnd: units a second the front-end thread allows with unlimited workers. */
  frontEndCeiling: number;
  baselineFrontEndCeiling: number;
}

export interface LedgerGoal {
  text: string;
  /** The measured ratio. */
  value: number;
  /** The most it may be. */
  limit: number;
  verdict: Verdict;
}

export interface Ledger {
  rows: LedgerRow[];
  goals: LedgerGoal[];
  /** For the goals on the total at 10 and 50 features: what every answer must cost (ledger-floors.ts). */
  floors: LedgerFloor[];
}

/** The goals on all threads' CPU per request against the bare same-bytes server. */
const TOTAL_LIMITS = [
  { features: 10, rowId: evaluateId(10), limit: 2.5 },
  { features: 50, rowId: evaluateId(50), limit: 3 },
] as const;

/** Each ledger row: the service's figure and what it is set against. */
const ROWS: readonly { id: string; baselineId: string; label: string; unit: "request" | "item"; baselineLabel?: string }[] = [
  { id: evaluateId(10), baselineId: answerTransportId(10), label: "GET /features/evaluated, 10 features", unit: "request" },
  { id: evaluateId(50), baselineId: answerTransportId(50), label: "GET /features/evaluated, 50 features", unit: "request" },
  {
    id: ENABLED_ID,
    baselineId: answerTransportId(50),
    label: "GET /features/enabled, 50 features",
    unit: "request",
    baselineLabel: "bare uWebSockets.js GET of an evaluated answer's size at 50 features (an enabled answer is smaller)",
  },
  { id: EVENT_ID, baselineId: GROUP_COMMIT_ID, label: "POST /event", unit: "request" },
  { id: BULK_MIXED_ID, baselineId: BULK_CEILING_ID, label: "POST /bulk, 1,000 mixed items (projection included), per item", unit: "item" },
  // OFREP beside the route it is compared with: where its extra cost sits, thread by thread.
  ...OFREP_PAIRS.map((pair) => ({ id: pair.id, baselineId: pair.baseline, label: `OFREP ${pair.id}`, unit: "request" as const, baselineLabel: `the service's ${pair.baseline}` })),
];

const ratioOf = (value: number | undefined, baseline: number | undefined): number =>
  value === undefined || baseline === undefined || !(baseline > 0) ? Number.NaN : value / baseline;
const ceilingOf = (us: number | undefined): number => (us === undefined || !(us > 0) ? Number.NaN : 1e6 / us);

/** `stages`: the run's profiled stages of an evaluation, for the floors (none: no floors). */
export function buildLedger(byId: ReadonlyMap<string, LoadFigure>, stages: readonly StageFigure[] = []): Ledger {
  const rows: LedgerRow[] = ROWS.filter((row) => byId.has(row.id)).map((row) => {
    const service = byId.get(row.id)?.threadCpuUsPerItem;
    const baselineFigure = byId.get(row.baselineId);
    const baseline = baselineFigure?.threadCpuUsPerItem;
    return {
      id: row.id,
      label: row.label,
      unit: row.unit,
      service,
      baselineId: row.baselineId,
      baselineLabel: row.baselineLabel ?? baselineFigure?.title ?? row.baselineId,
      baseline,
      ratio: ratioOf(service?.total, baseline?.total),
      frontEndRatio: ratioOf(service?.frontEnd, baseline?.frontEnd),
      frontEndCeiling: ceilingOf(service?.frontEnd),
      baselineFrontEndCeiling: ceilingOf(baseline?.frontEnd),
    };
  });
  const row = (id: string) => rows.find((candidate) => candidate.id === id);
  const goal = (text: string, value: number | undefined, limit: number): LedgerGoal => {
    const measured = value ?? Number.NaN;
    return { text, value: measured, limit, verdict: verdict(Number.isFinite(measured) ? measured <= limit : undefined) };
  };
  const cpu = (id: string) => byId.get(id)?.threadCpuUsPerItem?.total;
  const goals = [
    ...TOTAL_LIMITS.map(({ features, rowId, limit }) =>
      goal(`CPU per request at ${features} features ≤ ${limit.toFixed(1)}× the bare same-bytes server`, row(rowId)?.ratio, limit),
    ),
    goal("front-end thread at 10 features ≤ 1.5× the bare server's thread", row(evaluateId(10))?.frontEndRatio, 1.5),
    goal("front-end thread at 50 features ≤ 1.5× the bare server's thread", row(evaluateId(50))?.frontEndRatio, 1.5),
    goal("enabled-50 ≤ 1.5× evaluate-50's CPU per request", ratioOf(cpu(ENABLED_ID), cpu(evaluateId(50))), 1.5),
    goal("POST /event ≤ 1.5× the bare group-commit server's CPU per call", row(EVENT_ID)?.ratio, 1.5),
    goal("1,000-item mixed /bulk ≤ 2× the bulk ceiling's CPU per item (projection included)", row(BULK_MIXED_ID)?.ratio, 2),
  ];
  return { rows, goals, floors: ledgerFloors(rows, stages, TOTAL_LIMITS) };
}
