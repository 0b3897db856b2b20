/**
 * Soak: separate evaluation, `/event` and `/bulk` streams at a steady share of their measured maxima, with per-stream
 * latency and the projection's lag per window, then the bare group-commit server at the same `/event` rate on the
 * same disk.
 * `node dist/tools/soak.js --help` lists the options.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { featureDefinitions, trafficEntitiesBodies } from "../bench/support/fixtures.js";
import { BENCH_ADMIN_TOKEN, startGroupCommitServer } from "../bench/support/processes.js";
import { percentile, startLagSampler, waitCaughtUp } from "../bench/support/projection.js";
import { postBulk, seedApp } from "../bench/support/seed.js";
import { runStreamProcess, runStreams, type StreamFigures } from "../bench/support/load-streams.js";
import { p99Bound, scrape } from "./support/server-latency.js";
import { start } from "./support/service-process.js";
import type { StreamKind, StreamSpec } from "../bench/support/stream-spec.js";

const USAGE = `node dist/tools/soak.js [options]

Starts the built service on a fresh data dir, seeds --features features (the bench's rules) and 10,000 users x 200
companies, then:
 1. measures each stream's maximum alone (closed loop, --max-seconds): evaluation (GET /features/evaluated, distinct
    contexts from 10,000 users x 200 companies), /event (one event per call, distinct users), /bulk (50 mixed items:
    80 % events, 10 % users, 10 % companies);
 2. offers all three at once for --minutes, each at --load x its share x its maximum (shares --shares, of the
    service's capacity), in windows of --window seconds; per window and stream: served rate, p50/p99/max, errors,
    and the server's resident memory (anonymous vs file-backed: LMDB maps its file); each stream runs in a process
    of its own and reports that process's event-loop delay (a late generator inflates what it measures); the
    server's own view per window comes from GET /metrics: each route's p99 (routing to answer, as the upper bound of
    its histogram bucket) and the main thread's event-loop delay p99; the projection's lag (age of the oldest
    tracking call not yet projected) is sampled from GET /health every 100 ms, per window its p99 and maximum and
    the largest backlog; after the last window, how long the projection took to catch up;
 3. offers /event at the same rate to the bare group-commit server (bench/baselines/group-commit-server.js: parse,
    put, one commit per event-loop turn, answer after commit) on a fresh dir of the same disk, --baseline-windows
    windows; then --baseline-windows more while the service carries the soak's evaluation and /bulk streams at their
    rates (reported, not judged: the commit's latency on this machine under the soak's other load).
Targets reported, each PASS or MISS (the first window is warm-up and not judged): every window's evaluation p99
< 10 ms; worst window /event p99 <= 2x the baseline's worst window p99; every window's projection lag p99 < 1 s;
memory flat (anonymous memory growth < 10 %, warm-up window to last). Also reported: errors, and among them the
503 answers apart (retryable refusals: projection behind, or the queue full). Exits 1 when a request failed or
memory grew; the other targets are reported, not enforced. Load only ever targets 127.0.0.1. A short check of the
tool itself: --minutes 0.5 --window 10 --max-seconds 2 --baseline-windows 1.

Options:
  --minutes N            soak length (default 10)
  --window S             window length in seconds (default 60; the first window is warm-up)
  --load F               fraction of capacity offered (default 0.7)
  --shares E,V,B         capacity shares of evaluation, /event, /bulk (default 0.8,0.1,0.1)
  --features N           features in the environment (default 50)
  --max-seconds S        length of each maximum measurement (default 10)
  --baseline-windows N   windows of the group-commit baseline (default 2)
  --native 1|0           native or native-free service (default 1)
  --workers N            SWITCHYARD_WORKERS (default: the service's own)
  --rates E,V,B          offer these rates (requests/s of evaluation, /event, /bulk) instead of measuring maxima:
                         to soak two builds at the same load
  --service-cli PATH     soak another build's service (its dist/src/cli/main.js), e.g. an earlier commit checked out
                         beside this one, for a comparison on the same machine; a build from before log-first
                         tracking reports no projection in /health (it answered after its writes): it counts as
                         caught up, its lag as not sampled
`;

const { values } = parseArgs({
  options: {
    help: { type: "boolean", short: "h" },
    minutes: { type: "string", default: "10" },
    window: { type: "string", default: "60" },
    load: { type: "string", default: "0.7" },
    shares: { type: "string", default: "0.8,0.1,0.1" },
    features: { type: "string", default: "50" },
    "max-seconds": { type: "string", default: "10" },
    "baseline-windows": { type: "string", default: "2" },
    native: { type: "string", default: "1" },
    workers: { type: "string" },
    rates: { type: "string" },
    "service-cli": { type: "string" },
  },
});

const CLI = values["service-cli"] !== undefined ? resolve(values["service-cli"]) : resolve(import.meta.dirname, "../src/cli/main.js");

/** waitCaughtUp, where a service that reports no projection (a build from before log-first tracking) is caught up at once. */
const caughtUp = (url: string) => waitCaughtUp(url).catch((error: Error) => (error.message.includes("without projection") ? performance.now() : Promise.reject(error)));
const EVALUATION_P99_TARGET_MS = 10;
const EVENT_P99_FACTOR = 2;
const PROJECTION_LAG_P99_TARGET_MS = 1000;
const ANON_GROWTH_TARGET_PERCENT = 10;
/** Between two /health samples of the projection's lag: cheap next to the load, fine enough for a p99 per window. */
const LAG_SAMPLE_MS = 100;

interface Memory {
  rssMb: number;
  anonMb: number;
  fileMb: number;
}

/** The server's resident memory from /proc (Linux); threads (the worker pool) share the process. */
function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  const round = (value: number) => Math.round((value / 1024) * 10) / 10;
  return { rssMb: round(kb("VmRSS")), anonMb: round(kb("RssAnon")), fileMb: round(kb("RssFile") + kb("RssShmem")) };
}

/** Every window sends users and bodies no earlier window sent. */
const SEQUENCES_PER_WINDOW = 10_000_000;
/** The baseline beside the service sends users and bodies past every soak window's. */
const BASELINE_SEQUENCE_START = 1_000;
const ROUTES: Record<StreamKind, string> = { evaluation: "/features/evaluated", event: "/event", bulk: "/bulk" };

function specsFor(keys: { publishableKey: string; secretKey: string }, sequenceStart: number): Record<StreamKind, StreamSpec> {
  const spec = (kind: StreamKind): StreamSpec => ({ kind, publishableKey: keys.publishableKey, secretKey: keys.secretKey, sequenceStart });
  return { evaluation: spec("evaluation"), event: spec("event"), bulk: spec("bulk") };
}

/** The server's p99 per stream (upper bound of its histogram bucket, ms) and its main thread's loop delay p99. */
interface ServerView {
  p99BoundMs: Partial<Record<StreamKind, number>>;
  loopDelayP99Ms: number;
}

/** The projection's lag over a window, from GET /health. */
interface ProjectionView {
  lagP99Ms: number;
  lagMaxMs: number;
  backlogMax: number;
  samples: number;
  failedSamples: number;
}

interface Window {
  index: number;
  streams: Record<string, StreamFigures>;
  server: ServerView;
  projection: ProjectionView;
  memory: Memory;
  maxRssMbDuring: number;
}

const worst = (windows: readonly { streams: Record<string, StreamFigures> }[], stream: string) => Math.max(...windows.map((window) => window.streams[stream]!.p99));

async function soak(url: string, pid: number, keys: { publishableKey: string; secretKey: string }, offered: { kind: StreamKind; rate: number }[], windowCount: number, windowSeconds: number): Promise<Window[]> {
  const windows: Window[] = [];
  for (let index = 0; index < windowCount; index++) {
    let maxRss = 0;
    const sampler = setInterval(() => (maxRss = Math.max(maxRss, memoryOf(pid).rssMb)), 1_000);
    const specs = specsFor(keys, (index + 1) * SEQUENCES_PER_WINDOW);
    const before = await scrape(url, BENCH_ADMIN_TOKEN);
    const lagSampler = startLagSampler(url, LAG_SAMPLE_MS);
    const streams = await runStreams(url, offered.map(({ kind, rate }) => ({ spec: specs[kind], rate })), windowSeconds);
    const lag = await lagSampler.stop();
    const after = await scrape(url, BENCH_ADMIN_TOKEN);
    clearInterval(sampler);
    const p99BoundMs = Object.fromEntries(offered.map(({ kind }) => [kind, p99Bound(before, after, ROUTES[kind])]));
    const projection: ProjectionView = {
      lagP99Ms: percentile(lag.lagMs, 0.99),
      lagMaxMs: lag.lagMs.length === 0 ? Number.NaN : Math.max(...lag.lagMs),
      backlogMax: lag.backlogMax,
      samples: lag.lagMs.length,
      failedSamples: lag.failures,
    };
    const window: Window = { index, streams, server: { p99BoundMs, loopDelayP99Ms: after.loopDelayP99Ms }, projection, memory: memoryOf(pid), maxRssMbDuring: maxRss };
    windows.push(window);
    process.stderr.write(`${JSON.stringify(window)}\n`);
  }
  return windows;
}

/**
 * The bare group-commit server at the same /event rate, on a fresh dir of the same disk. With `beside`, the service
 * meanwhile carries the soak's other streams at their rates, so the bare server shares the machine as the service's
 * /event did: the commit's latency on this machine under that load, the bound of the service's /event p99.
 */
async function baseline(eventRate: number, windowCount: number, windowSeconds: number, beside?: { url: string; keys: { publishableKey: string; secretKey: string }; offered: { kind: StreamKind; rate: number }[] }): Promise<StreamFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-soak-ceiling-"));
  const server = await startGroupCommitServer(dir);
  try {
    const windows: StreamFigures[] = [];
    for (let index = 0; index < windowCount; index++) {
      const spec: StreamSpec = { kind: "event", publishableKey: "", secretKey: "", sequenceStart: index * SEQUENCES_PER_WINDOW };
      const others = beside === undefined ? undefined : specsFor(beside.keys, (BASELINE_SEQUENCE_START + index) * SEQUENCES_PER_WINDOW);
      const [figures] = await Promise.all([
        runStreamProcess(server.url, spec, windowSeconds, eventRate),
        beside === undefined ? undefined : runStreams(beside.url, beside.offered.map(({ kind, rate }) => ({ spec: others![kind], rate })), windowSeconds),
      ]);
      windows.push(figures);
      process.stderr.write(`baseline${beside === undefined ? "" : " beside the service's other streams"} ${JSON.stringify(figures)}\n`);
    }
    return windows;
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "switchyard-soak-"));
  const server = await start({
    cli: CLI,
    dataDir,
    native: values.native!,
    // The bench's seeding helpers sign in with the bench's admin token.
    env: { SWITCHYARD_ADMIN_TOKEN: BENCH_ADMIN_TOKEN, ...(values.workers !== undefined ? { SWITCHYARD_WORKERS: values.workers } : {}) },
    onLine: (line) => {
      if (line.includes('"level":"error"')) process.stderr.write(`server: ${line}\n`);
    },
  });
  try {
    const app = await seedApp(server.url, "soak", featureDefinitions(Number(values.features)));
    for (const body of trafficEntitiesBodies()) await postBulk(server.url, app.publishableKey, body);
    await caughtUp(server.url);
    const maxSeconds = Number(values["max-seconds"]);
    const maxima: Record<string, StreamFigures> = {};
    const fixedRates = values.rates?.split(",").map(Number);
    if (fixedRates !== undefined && (fixedRates.length !== 3 || !fixedRates.every((perSecond) => perSecond > 0))) throw new Error("--rates takes three rates above 0: evaluation,event,bulk");
    for (const spec of fixedRates === undefined ? Object.values(specsFor(app, 0)) : []) {
      maxima[spec.kind] = await runStreamProcess(server.url, spec, maxSeconds);
      process.stderr.write(`maximum ${spec.kind}: ${JSON.stringify(maxima[spec.kind])}\n`);
      // What a tracking stream's maximum left unprojected must not weigh on the next measurement or the soak.
      await caughtUp(server.url);
    }
    const [evaluationShare, eventShare, bulkShare] = values.shares!.split(",").map(Number) as [number, number, number];
    const load = Number(values.load);
    // Tracking streams: their acknowledged rate, since past the projection's lag bound refusals come back fast.
    const maximum = (kind: StreamKind) => (kind === "evaluation" ? maxima[kind]!.rps : (maxima[kind]!.acknowledgedRps ?? maxima[kind]!.rps));
    const rate = (kind: StreamKind, share: number) => (fixedRates !== undefined ? fixedRates[["evaluation", "event", "bulk"].indexOf(kind)]! : Math.max(1, Math.round(load * share * maximum(kind))));
    const offered: { kind: StreamKind; rate: number }[] = [
      { kind: "evaluation", rate: rate("evaluation", evaluationShare) },
      { kind: "event", rate: rate("event", eventShare) },
      { kind: "bulk", rate: rate("bulk", bulkShare) },
    ];
    process.stderr.write(`offering ${offered.map(({ kind, rate: perSecond }) => `${kind} ${perSecond}/s`).join(", ")}\n`);

    const windowSeconds = Number(values.window);
    const windowCount = Math.max(2, Math.round((Number(values.minutes) * 60) / windowSeconds));
    const windows = await soak(server.url, server.pid, app, offered, windowCount, windowSeconds);
    const soakEnded = performance.now();
    const projectionCatchUpAfterSoakSeconds = await caughtUp(server.url).then(
      (caughtUpAt) => Math.round((caughtUpAt - soakEnded) / 10) / 100,
      (error: unknown) => (process.stderr.write(`projection: ${(error as Error).message}\n`), null),
    );
    const eventRate = offered[1]!.rate;
    const ceilingWindows = await baseline(eventRate, Number(values["baseline-windows"]), windowSeconds);
    const others = offered.filter(({ kind }) => kind !== "event");
    const besideWindows = await baseline(eventRate, Number(values["baseline-windows"]), windowSeconds, { url: server.url, keys: app, offered: others });
    const besideWorstP99 = Math.max(...besideWindows.map((window) => window.p99));

    const measured = windows.slice(1);
    const warm = windows[0]!;
    const last = windows[windows.length - 1]!;
    const growth = (from: number, to: number) => Math.round(((to - from) / from) * 1000) / 10;
    const evaluationWorstP99 = worst(measured, "evaluation");
    const eventWorstP99 = worst(measured, "event");
    const ceilingWorstP99 = Math.max(...ceilingWindows.map((window) => window.p99));
    // A window without a single lag sample has no p99: NaN, which fails the target rather than passing it unseen.
    const lagWorstP99 = Math.max(...measured.map((window) => window.projection.lagP99Ms));
    const errors = windows.reduce((sum, window) => sum + Object.values(window.streams).reduce((total, figures) => total + figures.errors, 0), 0);
    const refused = windows.reduce((sum, window) => sum + Object.values(window.streams).reduce((total, figures) => total + (figures.refused ?? 0), 0), 0);
    const anonGrowthPercent = growth(warm.memory.anonMb, last.memory.anonMb);
    const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
    const report = {
      date: new Date().toISOString(),
      command: `node dist/tools/soak.js ${process.argv.slice(2).join(" ")}`.trim(),
      native: values.native,
      features: Number(values.features),
      maxima,
      offered: Object.fromEntries(offered.map(({ kind, rate: perSecond }) => [kind, perSecond])),
      minutes: (windowCount * windowSeconds) / 60,
      errors,
      refused503: refused,
      rssAfterWarmUpMb: warm.memory.rssMb,
      rssEndMb: last.memory.rssMb,
      anonAfterWarmUpMb: warm.memory.anonMb,
      anonEndMb: last.memory.anonMb,
      anonGrowthPercent,
      fileBackedEndMb: last.memory.fileMb,
      evaluationP99ByWindowMs: measured.map((window) => window.streams.evaluation!.p99),
      eventP99ByWindowMs: measured.map((window) => window.streams.event!.p99),
      bulkP99ByWindowMs: measured.map((window) => window.streams.bulk!.p99),
      generatorLoopDelayP99ByWindowMs: measured.map((window) => Object.fromEntries(Object.entries(window.streams).map(([kind, figures]) => [kind, figures.generatorLoopDelayP99Ms]))),
      serverP99BoundByWindowMs: measured.map((window) => window.server.p99BoundMs),
      serverLoopDelayP99ByWindowMs: measured.map((window) => window.server.loopDelayP99Ms),
      projectionLagP99ByWindowMs: measured.map((window) => window.projection.lagP99Ms),
      projectionLagMaxByWindowMs: measured.map((window) => window.projection.lagMaxMs),
      projectionBacklogMaxByWindow: measured.map((window) => window.projection.backlogMax),
      projectionCatchUpAfterSoakSeconds,
      groupCommitCeiling: { rate: eventRate, p99ByWindowMs: ceilingWindows.map((window) => window.p99), windows: ceilingWindows },
      // Not a target: what the commit alone costs on this machine while it carries the soak's other streams.
      groupCommitBesideLoad: {
        rate: eventRate,
        besideStreams: Object.fromEntries(others.map(({ kind, rate: perSecond }) => [kind, perSecond])),
        p99ByWindowMs: besideWindows.map((window) => window.p99),
        eventWorstP99RatioToIt: Math.round((eventWorstP99 / Math.max(besideWorstP99, 1)) * 100) / 100,
        windows: besideWindows,
      },
      // Judged with the /bulk stream on at its share (offered.bulk); with --shares …,0 it still sends one body a second.
      targets: {
        evaluationP99EveryWindow: { worstMs: evaluationWorstP99, targetMs: EVALUATION_P99_TARGET_MS, verdict: verdict(evaluationWorstP99 < EVALUATION_P99_TARGET_MS) },
        eventP99VersusCeiling: {
          worstMs: eventWorstP99,
          ceilingWorstMs: ceilingWorstP99,
          ratio: Math.round((eventWorstP99 / Math.max(ceilingWorstP99, 1)) * 100) / 100,
          targetFactor: EVENT_P99_FACTOR,
          verdict: verdict(eventWorstP99 <= EVENT_P99_FACTOR * Math.max(ceilingWorstP99, 1)),
        },
        projectionLagP99EveryWindow: { worstMs: lagWorstP99, targetMs: PROJECTION_LAG_P99_TARGET_MS, verdict: verdict(lagWorstP99 < PROJECTION_LAG_P99_TARGET_MS) },
        memoryFlat: { anonGrowthPercent, targetPercent: ANON_GROWTH_TARGET_PERCENT, verdict: verdict(anonGrowthPercent < ANON_GROWTH_TARGET_PERCENT) },
      },
      windows,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    for (const [name, target] of Object.entries(report.targets)) process.stderr.write(`${target.verdict} ${name}: ${JSON.stringify(target)}\n`);
    // Judged on anonymous memory: file-backed pages are LMDB's map of a database that grows by design during a soak.
    process.exitCode = report.targets.memoryFlat.verdict === "PASS" && errors === 0 ? 0 : 1;
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (values.help) process.stdout.write(USAGE);
else await main();
