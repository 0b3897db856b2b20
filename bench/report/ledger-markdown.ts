/** The ledger's section of the Markdown report (see ledger.ts for what it holds). */
import type { RoleCpu } from "../support/thread-cpu.js";
import { count, isNumber, table } from "./format.js";
import type { Ledger } from "./ledger.js";
import { FLOOR_STAGES, type LedgerFloor } from "./ledger-floors.js";

export const LEDGER_HEADING = "## CPU per request: the ledger";

const us = (value: number | undefined) => (isNumber(value) ? value.toFixed(value < 10 ? 2 : 1) : "—");
const times = (value: number) => (isNumber(value) ? `${value.toFixed(2)}×` : "—");

function workers(split: RoleCpu | undefined): string {
  if (split === undefined || split.workers.length === 0) return "—";
  const sum = split.workers.reduce((total, value) => total + value, 0);
  return split.workers.length === 1 ? us(sum) : `${us(sum)} (${split.workers.map(us).join(" + ")})`;
}

export function ledgerBlocks(ledger: Ledger): string[] {
  if (ledger.rows.length === 0) return [LEDGER_HEADING, "_Not measured (Linux /proc is needed)._"];
  return [
    LEDGER_HEADING,
    "CPU µs per request (per item for bulk) of each server thread, from /proc/<pid>/task/*/stat over the whole measured runs, " +
      "unprofiled; medians over the runs. The front end is the main thread (HTTP, routing, keys, the hop's main side); " +
      "workers are the Piscina job threads, the projector its own thread; \"other\" is V8's and libuv's helpers (garbage " +
      "collection, lmdb-js's write thread). The bare servers are the same-bytes hello-world and the group-commit servers " +
      "of the baselines; their figures are taken from their own runs. The front-end ceiling is 1e6 / its µs: what one " +
      "front-end thread can answer a second with unlimited workers. Clock ticks are 10 ms: short runs round.",
    table(
      ["scenario", "front end µs", "workers µs", "projector µs", "other µs", "total µs", "bare server", "bare front µs", "bare total µs", "ratio", "front ratio", "front-end ceiling /s", "bare ceiling /s"],
      ledger.rows.map((row) => [
        `${row.label} (${row.id})`,
        us(row.service?.frontEnd),
        workers(row.service),
        us(row.service?.projector),
        us(row.service?.other),
        us(row.service?.total),
        `${row.baselineLabel} (${row.baselineId})`,
        us(row.baseline?.frontEnd),
        us(row.baseline?.total),
        times(row.ratio),
        times(row.frontEndRatio),
        count(row.frontEndCeiling),
        count(row.baselineFrontEndCeiling),
      ]),
    ),
    table(
      ["goal", "measured", "limit", "verdict"],
      ledger.goals.map((goal) => [goal.text, times(goal.value), `≤ ${goal.limit}×`, goal.verdict]),
    ),
    ...ledger.floors.map(floorLine),
  ];
}

/** What every answer at N features must cost, against what the goal on the total allows. */
function floorLine(floor: LedgerFloor): string {
  const parts = FLOOR_STAGES.map((stage) => `${stage} ${us(floor.stageUs[stage])}`).join(" + ");
  const judged = floor.bounded
    ? "bounded: what every answer must do already costs more than the goal allows"
    : `not bounded by it: ${us(floor.allowedUs - floor.floorUs)} µs would remain for everything else`;
  return (
    `**What every answer at ${floor.features} features must cost** (this run's profiled stages, "CPU per stage", scaled ` +
    `to the unprofiled ledger by ×${floor.scale.toFixed(3)}): the bare server ${us(floor.transportUs)} µs + ${parts} = ` +
    `**${us(floor.floorUs)} µs**, against the ${us(floor.allowedUs)} µs the goal on the total allows — ${judged}.`
  );
}
