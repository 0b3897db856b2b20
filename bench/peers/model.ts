/**
 * What the peers benchmark reports (bench/peers/peers-bench.ts), in the JSON report under `peers`: Switchyard against
 * Unleash 6.4.1's frontend API and the Unleash Proxy 1.4.19 serving the same 50 flags, the goals and what bounds a miss.
 */
import type { Verdict } from "../report/comparison.js";
import type { LoadResult } from "../support/load.js";
import { median, spread, type Spread } from "../support/stats.js";
import type { AgreementReport } from "./agreement.js";

export type PeerName = "switchyard" | "unleash" | "proxy";

export const PEER_LABELS: Readonly<Record<PeerName, string>> = {
  switchyard: "Switchyard GET /features/evaluated",
  unleash: "Unleash 6.4.1 GET /api/frontend",
  proxy: "Unleash Proxy 1.4.19 GET /proxy",
};

/** One measured run of one server. */
export interface PeerRun {
  peer: PeerName;
  /** 1-based round of the alternation (S U P, S U P, …). */
  round: number;
  load: LoadResult;
  /** CPU of the server's process per request, µs (Linux /proc; NaN elsewhere). */
  serverCpuUsPerRequest: number;
  /** Unleash only: CPU of its PostgreSQL processes per request, µs. */
  databaseCpuUsPerRequest?: number;
}

export interface PeerFigure {
  peer: PeerName;
  label: string;
  runs: number;
  /** Medians over the rounds. */
  rps: number;
  p50Ms: number;
  p99Ms: number;
  serverCpuUsPerRequest: number;
  databaseCpuUsPerRequest?: number;
  spread: Spread;
  errors: number;
}

export interface PeerGoal {
  label: string;
  /** What was measured, as text (e.g. "31.2×", "4.1 ms against 120 ms"). */
  measured: string;
  target: string;
  verdict: Verdict;
  /** For a miss: what bounds it, where the figures say. */
  bound?: string;
}

export interface PeersSection {
  /** Set when the peers were not measured (no PostgreSQL, an install failed, the servers disagreed); the rest is then empty. */
  skipped?: string;
  features: number;
  connections: number;
  durationSeconds: number;
  quietGapSeconds: number;
  rounds: number;
  /** Distinct contexts the load cycles through. */
  contexts: number;
  agreement?: AgreementReport;
  /** Import warnings by code (what the importer could not carry over exactly). */
  importWarnings: Record<string, number>;
  runs: PeerRun[];
  figures: PeerFigure[];
  goals: PeerGoal[];
}

export function skippedPeers(reason: string, agreement?: AgreementReport): PeersSection {
  return {
    skipped: reason,
    features: 0,
    connections: 0,
    durationSeconds: 0,
    quietGapSeconds: 0,
    rounds: 0,
    contexts: 0,
    ...(agreement !== undefined ? { agreement } : {}),
    importWarnings: {},
    runs: [],
    figures: [],
    goals: [],
  };
}

/** The goals: requests per second against each peer, and p99 below theirs. */
export const RATE_GOALS: readonly { peer: Exclude<PeerName, "switchyard">; min: number }[] = [
  { peer: "unleash", min: 40 },
  { peer: "proxy", min: 20 },
];

/** Medians per server over its runs. */
export function peerFigures(runs: readonly PeerRun[]): PeerFigure[] {
  return (["switchyard", "unleash", "proxy"] as const).flatMap((peer): PeerFigure[] => {
    const own = runs.filter((run) => run.peer === peer);
    if (own.length === 0) return [];
    const database = own.map((run) => run.databaseCpuUsPerRequest).filter((value): value is number => value !== undefined);
    return [
      {
        peer,
        label: PEER_LABELS[peer],
        runs: own.length,
        rps: median(own.map((run) => run.load.rps)),
        p50Ms: median(own.map((run) => run.load.latencyMs.p50)),
        p99Ms: median(own.map((run) => run.load.latencyMs.p99)),
        serverCpuUsPerRequest: median(own.map((run) => run.serverCpuUsPerRequest)),
        ...(database.length > 0 ? { databaseCpuUsPerRequest: median(database) } : {}),
        spread: spread(own.map((run) => run.load.rps)),
        errors: own.reduce((sum, run) => sum + run.load.errors, 0),
      },
    ];
  });
}

const times = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)}×` : "—");
const msText = (value: number) => (Number.isFinite(value) ? `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms` : "—");

/**
 * Each goal with its verdict. A missed rate ratio is set against the ratio of CPU per request (what the ratio would
 * be if every server had the same CPU to itself and used all of it) and, where the run measured it, the
 * hello-world ceiling of the same machine (no server answers faster than an empty one with the same load generator).
 */
export function peerGoals(figures: readonly PeerFigure[], helloWorldRps?: number): PeerGoal[] {
  const ours = figures.find((figure) => figure.peer === "switchyard");
  if (ours === undefined) return [];
  const goals: PeerGoal[] = [];
  for (const { peer, min } of RATE_GOALS) {
    const theirs = figures.find((figure) => figure.peer === peer);
    if (theirs === undefined) continue;
    const ratio = ours.rps / theirs.rps;
    const ok = Number.isFinite(ratio) ? ratio >= min : undefined;
    const goal: PeerGoal = { label: `requests/s against ${PEER_LABELS[peer]}`, measured: times(ratio), target: `≥ ${min}×`, verdict: ok === undefined ? "—" : ok ? "PASS" : "MISS" };
    if (ok === false) goal.bound = rateBound(ours, theirs, min, helloWorldRps);
    goals.push(goal);
    const p99Ok = Number.isFinite(ours.p99Ms) && Number.isFinite(theirs.p99Ms) ? ours.p99Ms < theirs.p99Ms : undefined;
    goals.push({
      label: `p99 against ${PEER_LABELS[peer]}`,
      measured: `${msText(ours.p99Ms)} against ${msText(theirs.p99Ms)}`,
      target: "below theirs",
      verdict: p99Ok === undefined ? "—" : p99Ok ? "PASS" : "MISS",
      ...(p99Ok === false ? { bound: "Both ran the same closed loop of 50 connections: a higher p99 at a higher rate is queueing in the server, not per-request work." } : {}),
    });
  }
  return goals;
}

function rateBound(ours: PeerFigure, theirs: PeerFigure, min: number, helloWorldRps: number | undefined): string {
  const parts: string[] = [];
  const theirCpu = theirs.serverCpuUsPerRequest + (theirs.databaseCpuUsPerRequest ?? 0);
  const cpuRatio = theirCpu / ours.serverCpuUsPerRequest;
  if (Number.isFinite(cpuRatio)) {
    parts.push(
      `CPU per request: ${ours.serverCpuUsPerRequest.toFixed(1)} µs here against ${theirCpu.toFixed(1)} µs there, a ratio of ${times(cpuRatio)}` +
        (cpuRatio >= min
          ? ": the work per request clears the goal, so the rate ratio is held down by how the two cores are shared (load generator and server), not by the server's work."
          : ": the work per request alone falls short of the goal."),
    );
  }
  if (helloWorldRps !== undefined && Number.isFinite(helloWorldRps)) {
    const needed = theirs.rps * min;
    parts.push(
      `The goal needs ${Math.round(needed).toLocaleString("en")} req/s here; an empty uWebSockets.js server answered ${Math.round(helloWorldRps).toLocaleString("en")} req/s with the same load generator in this run` +
        (needed > helloWorldRps ? ", so no server could reach it on this machine." : "."),
    );
  }
  return parts.join(" ");
}
