/** How long and how often each kind of benchmark runs in each mode, and the command line that picks one. */
import { parseArgs } from "node:util";
import type { Driver } from "./load.js";

export type ModeName = "full" | "quick" | "smoke";

export interface Mode {
  name: ModeName;
  /** Seconds per measured load run (wrk takes whole seconds). */
  durationSeconds: number;
  /** Longest a measured run is stretched to when requests are slow (see support/lab.ts). */
  maxDurationSeconds: number;
  /** Seconds of warm-up load before the measured runs of a scenario; not reported. */
  warmupSeconds: number;
  /** Measured runs per scenario: the report gives their median and spread. */
  repeats: number;
  /** Requests per run instead of a duration (smoke; not for wrk, which only stops on time). */
  amount?: number;
  warmupAmount?: number;
  connections: number;
  micro: { timeMs: number; warmupMs: number };
  /** Events written by the raw LMDB baseline per run. */
  lmdbEvents: number;
  /**
   * Evaluation alone, in-process (bench/evaluation/write-answer.ts): timed rounds, and per round about `budget`
   * features evaluated in answers of each feature count, at most `cap` answers.
   */
  evaluationAlone: { rounds: number; budget: number; cap: number };
  featureCounts: readonly number[];
  contextSizes: readonly number[];
  /** Stored users (and as many companies) at which memory and start-up are read. */
  storedEntities: readonly number[];
}

const FEATURE_COUNTS = [10, 50, 200, 1000] as const;

export const MODES: Readonly<Record<ModeName, Mode>> = {
  full: {
    name: "full",
    durationSeconds: 5,
    maxDurationSeconds: 10,
    warmupSeconds: 2,
    repeats: 3,
    connections: 50,
    micro: { timeMs: 1000, warmupMs: 200 },
    lmdbEvents: 200_000,
    evaluationAlone: { rounds: 5, budget: 4_000_000, cap: 20_000 },
    featureCounts: FEATURE_COUNTS,
    contextSizes: [2, 6, 24],
    storedEntities: [0, 10_000, 100_000, 1_000_000],
  },
  quick: {
    name: "quick",
    durationSeconds: 1,
    maxDurationSeconds: 3,
    warmupSeconds: 1,
    repeats: 1,
    connections: 50,
    micro: { timeMs: 100, warmupMs: 30 },
    lmdbEvents: 20_000,
    evaluationAlone: { rounds: 3, budget: 1_000_000, cap: 5_000 },
    featureCounts: FEATURE_COUNTS,
    contextSizes: [2, 6, 24],
    storedEntities: [0, 1_000, 10_000],
  },
  smoke: {
    name: "smoke",
    durationSeconds: 1,
    maxDurationSeconds: 1,
    warmupSeconds: 1,
    repeats: 1,
    amount: 60,
    warmupAmount: 20,
    connections: 10,
    micro: { timeMs: 5, warmupMs: 1 },
    lmdbEvents: 2_000,
    evaluationAlone: { rounds: 1, budget: 10_000, cap: 200 },
    featureCounts: [10, 50],
    contextSizes: [2, 6],
    storedEntities: [0, 100],
  },
};

export interface CliOptions {
  mode: Mode;
  /** Where the JSON and Markdown reports go. */
  outDir: string | undefined;
  /** Forces a load generator; by default wrk when present, else autocannon (the in-process prober in smoke mode). */
  driver: Driver | undefined;
  /** Only the peers (Unleash, the Unleash Proxy) against Switchyard, at the mode's length. */
  peers: boolean;
}

export const USAGE = `node dist/bench/run.js [--quick | --smoke] [--peers] [--out DIR] [--driver wrk|autocannon]

  (default)   full run: every scenario 3×, ${MODES.full.durationSeconds} s each after ${MODES.full.warmupSeconds} s of warm-up, up to 1M stored users
  --quick     every scenario once, ${MODES.quick.durationSeconds} s each; under 2 minutes on a 2-core machine
  --smoke     a few requests per scenario, seconds in all: checks the harness, not the service
  --out DIR   write <date>-<host>.json and .md into DIR (default bench/results)
  --driver    force wrk, autocannon or probe (in-process, for smoke runs)
  --peers     only Switchyard against Unleash 6.4.1 (/api/frontend) and the Unleash Proxy 1.4.19 (/proxy), same 50
              flags, alternated 3 × 10 s each (2 × 1 s with --smoke); writes <date>-<host>-peers.json and .md.
              Needs PostgreSQL (initdb); installs unleash-server and @unleash/proxy into $TMPDIR once. Full runs
              include it last; without PostgreSQL it is skipped with one line, never a failure.

  The last load phase sets cluster mode (3 local nats-servers, R3) against a standalone node; without nats-server
  it is skipped and the report says why (NATS_SERVER_BIN names another binary). Alone: dist/bench/cluster/run-cluster.js
`;

export function parseCli(argv: readonly string[]): CliOptions | "help" {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean" },
      smoke: { type: "boolean" },
      out: { type: "string" },
      driver: { type: "string" },
      peers: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) return "help";
  if (values.quick && values.smoke) throw new Error("--quick and --smoke exclude each other");
  if (values.driver !== undefined && !["wrk", "autocannon", "probe"].includes(values.driver)) throw new Error("--driver must be wrk, autocannon or probe");
  return {
    mode: MODES[values.smoke ? "smoke" : values.quick ? "quick" : "full"],
    outDir: values.out,
    driver: values.driver as Driver | undefined,
    peers: values.peers === true,
  };
}
