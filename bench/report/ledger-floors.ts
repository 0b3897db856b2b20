/**
 * What every evaluation answer must cost, in figures of the same run: the bare server's whole CPU per request (the
 * transport of the same bytes) and the stages of a profiled evaluation that no answer skips — the hop to the pool and
 * back, reading the context, remote context, evaluation itself — scaled to the ledger's unprofiled total (profiling
 * inflates every stage alike). When that floor reaches what a goal allows, taking down anything else (routing, keys,
 * caches, metrics) cannot meet it: the miss is bounded by that work, measured.
 */
import type { StageFigure } from "../serving/evaluation-stages.js";
import type { Stage } from "../support/cpu-stages.js";

/** What a floor reads of a ledger row (ledger.ts's rows fit). */
interface RowTotals {
  id: string;
  service: { total: number } | undefined;
  baseline: { total: number } | undefined;
}

/** The stages every answer passes through, in the order the report names them. */
export const FLOOR_STAGES = ["thread hop", "query parse", "remote context", "evaluation (rules)", "rollout hashing", "serialisation"] as const satisfies readonly Stage[];

export interface LedgerFloor {
  features: number;
  /** The bare same-bytes server's total, µs per request. */
  transportUs: number;
  /** Each of FLOOR_STAGES, µs per request, scaled to the unprofiled run. */
  stageUs: Record<(typeof FLOOR_STAGES)[number], number>;
  /** The ledger's unprofiled total over the profiled one. */
  scale: number;
  floorUs: number;
  /** The goal's limit times the bare server's total: the most the service may spend. */
  allowedUs: number;
  /** Whether the floor alone reaches what the goal allows. */
  bounded: boolean;
}

/** A floor per goal on the total at N features, where the run has the ledger row and the stages at N. */
export function ledgerFloors(
  rows: readonly RowTotals[],
  stages: readonly StageFigure[],
  limits: readonly { features: number; rowId: string; limit: number }[],
): LedgerFloor[] {
  const floors: LedgerFloor[] = [];
  for (const { features, rowId, limit } of limits) {
    const row = rows.find((candidate) => candidate.id === rowId);
    const profiled = stages.find((figure) => figure.features === features);
    const service = row?.service?.total;
    const transportUs = row?.baseline?.total;
    if (profiled === undefined || service === undefined || transportUs === undefined || !(profiled.totalUs > 0)) continue;
    const scale = service / profiled.totalUs;
    const stageUs = Object.fromEntries(FLOOR_STAGES.map((stage) => [stage, profiled.stages[stage] * scale])) as LedgerFloor["stageUs"];
    const floorUs = transportUs + FLOOR_STAGES.reduce((sum, stage) => sum + stageUs[stage], 0);
    const allowedUs = limit * transportUs;
    floors.push({ features, transportUs, stageUs, scale, floorUs, allowedUs, bounded: floorUs >= allowedUs });
  }
  return floors;
}
