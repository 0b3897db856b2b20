/** The report's "## Peers" section: Switchyard against Unleash and the Unleash Proxy (bench/peers/peers-bench.ts). */
import { count, isNumber, ms, shorten, table } from "../report/format.js";
import { PEER_LABELS, type PeersSection } from "./model.js";

export const PEERS_HEADING = "## Peers: Unleash 6.4.1 and the Unleash Proxy 1.4.19";

const micro = (value: number | undefined) => (isNumber(value) ? `${value.toFixed(1)} µs` : "—");

export function peersBlocks(peers: PeersSection): string[] {
  if (peers.skipped !== undefined) {
    const blocks = [`_Peers skipped: ${shorten(peers.skipped, 400)}._`];
    if (peers.agreement !== undefined && peers.agreement.disagreements.length > 0) blocks.push(peers.agreement.disagreements.map((line) => `- ${line}`).join("\n"));
    return blocks;
  }
  const ours = peers.figures.find((figure) => figure.peer === "switchyard");
  const agreement = peers.agreement;
  return [
    `The same ${peers.features} flags in each (created in Unleash through its admin API, then imported with Switchyard's Unleash importer; ` +
      `import warnings: ${Object.entries(peers.importWarnings).map(([code, n]) => `${code} ×${n}`).join(", ") || "none"}), ` +
      `${count(peers.contexts)} distinct contexts cycled, ${peers.connections} connections, ${peers.durationSeconds} s per run, ` +
      `${peers.quietGapSeconds} s quiet before each, ${peers.rounds} rounds of S U P. CPU is each server process's own (from /proc); Unleash's PostgreSQL apart.` +
      (agreement !== undefined
        ? ` Before timing, the three answered alike for ${agreement.contexts} contexts (${count(agreement.exactComparisons)} flag answers compared exactly; ${agreement.sharedFlags} flags with rehashed rollouts compared by share; ` +
          `on average ${agreement.enabledPerContext.switchyard.toFixed(1)} flags on per context here, ${agreement.enabledPerContext.unleash.toFixed(1)} in Unleash).`
        : ""),
    "### Goals",
    table(
      ["goal", "measured", "target", "verdict"],
      peers.goals.map((goal) => [goal.label, goal.measured, goal.target, goal.verdict]),
    ),
    ...peers.goals.filter((goal) => goal.bound !== undefined).map((goal) => `- **${goal.label}** (${goal.verdict}): ${goal.bound}`),
    "### Each server (medians over the rounds)",
    table(
      ["server", "req/s", "spread", "p50", "p99", "CPU per request", "PostgreSQL CPU per request", "Switchyard ÷ this", "errors"],
      peers.figures.map((figure) => [
        figure.label,
        count(figure.rps),
        figure.runs > 1 ? `${count(figure.spread.min)}–${count(figure.spread.max)} (n=${figure.runs})` : `n=${figure.runs}`,
        ms(figure.p50Ms),
        ms(figure.p99Ms),
        micro(figure.serverCpuUsPerRequest),
        figure.databaseCpuUsPerRequest !== undefined ? micro(figure.databaseCpuUsPerRequest) : "—",
        ours === undefined || figure.peer === "switchyard" ? "—" : `${(ours.rps / figure.rps).toFixed(1)}×`,
        count(figure.errors),
      ]),
    ),
    "### Every run, in the order measured",
    table(
      ["round", "server", "req/s", "p50", "p99", "CPU per request", "errors"],
      peers.runs.map((run) => [String(run.round), PEER_LABELS[run.peer], count(run.load.rps), ms(run.load.latencyMs.p50), ms(run.load.latencyMs.p99), micro(run.serverCpuUsPerRequest), count(run.load.errors)]),
    ),
  ];
}

export function renderPeersMarkdown(peers: PeersSection, header: string[] = []): string {
  return `${[...header, PEERS_HEADING, ...peersBlocks(peers)].join("\n\n")}\n`;
}
