/**
 * `npm run bench` (node dist/bench/run.js [--quick | --smoke] [--out DIR]): micro-benchmarks, baselines and load
 * scenarios against the real service, written side by side to bench/results/<date>-<host>.{json,md}.
 *
 * Order matters on a shared 2-core machine: in-process micro-benchmarks and the raw LMDB baseline run first, while
 * nothing else of ours is running; then one server at a time, each with a core to itself and wrk on the other.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, hostname, loadavg, totalmem } from "node:os";
import { join, relative, resolve } from "node:path";
import { benchBulkRecords, type BulkRecordsFigure } from "./baselines/bulk-records.js";
import { benchLmdbPuts, type LmdbPutsFigure } from "./baselines/lmdb-puts.js";
import { benchAnswerTransport, benchBulkCeiling, benchEventRecordsCeiling, benchGroupCommitCeiling, benchHelloWorld, HELLO_IDS } from "./baselines/transport.js";
import { benchContextFromQuery } from "./evaluation/context-from-query.js";
import { benchEvaluatorVsReference } from "./evaluation/evaluator-vs-reference.js";
import { benchEvaluationAlone, type EvaluationAloneFigure } from "./evaluation/write-answer.js";
import { benchRolloutHash } from "./evaluation/rollout-hash.js";
import { benchSharedCopy } from "./workers/shared-copy.js";
import { renderMarkdown } from "./report/markdown.js";
import { buildReport, type BenchReport, type Measurements, type StartupPoint } from "./report/model.js";
import { benchNativeFree } from "./runtime/native-free.js";
import { benchCluster } from "./cluster/cluster-bench.js";
import { skippedCluster, type ClusterSection } from "./cluster/model.js";
import { skippedPeers, type PeersSection } from "./peers/model.js";
import { benchPeers } from "./peers/peers-bench.js";
import { runPeersOnly } from "./peers/peers-only.js";
import { benchTrackingBulk } from "./schemas/tracking-bulk.js";
import { benchCompression, benchContextSizes, benchEvaluation, evaluateId, type ServiceTarget } from "./serving/evaluation-routes.js";
import { measureStages, profilingNodeArgs, type StageFigure } from "./serving/evaluation-stages.js";
import { evaluateRequests } from "./serving/requests.js";
import { benchMixed } from "./serving/mixed.js";
import { benchOfrep } from "./serving/ofrep-routes.js";
import { benchRules } from "./serving/rules-route.js";
import { benchTracking } from "./serving/tracking-routes.js";
import { benchEventCodec, eventRecordSizes } from "./storage/event-codec.js";
import { benchStoredData, type StoredDataPoint } from "./storage/stored-data.js";
import { bulkContextEntitiesBody, featureDefinitions, trafficEntitiesBodies } from "./support/fixtures.js";
import type { Lab, LoadFigure } from "./support/lab.js";
import { detectDriver } from "./support/load.js";
import type { MicroFigure } from "./support/micro.js";
import { parseCli, USAGE } from "./support/modes.js";
import { waitCaughtUp } from "./support/projection.js";
import { startService, tempDir } from "./support/processes.js";
import { postBulk, seedApp, type SeededApp } from "./support/seed.js";
import { ARRANGEMENTS, benchArrangement, MAIN_WORKERS } from "./workers/executor-arrangements.js";

const RESULTS_DIR = resolve(import.meta.dirname, "../../bench/results");

async function main(): Promise<void> {
  const cli = parseCli(process.argv.slice(2));
  if (cli === "help") {
    process.stdout.write(USAGE);
    return;
  }
  const { mode } = cli;
  const started = new Date();
  const startLoad = loadavg();
  const scratch = tempDir("switchyard-bench-");
  const driver = cli.driver ?? (mode.name === "smoke" ? "probe" : detectDriver());
  const lab: Lab = {
    mode,
    driver,
    scratchDir: scratch.path,
    log: (message) => process.stderr.write(`[bench ${((Date.now() - started.getTime()) / 1000).toFixed(1).padStart(6)} s] ${message}\n`),
  };
  lab.log(`mode ${mode.name}, load generator ${driver}, ${availableParallelism()} cores, load average ${startLoad.map((value) => value.toFixed(2)).join(" ")}`);
  if (cli.peers) {
    try {
      await runPeersOnly(lab, resolve(cli.outDir ?? RESULTS_DIR), process.argv.slice(2));
    } finally {
      scratch.remove();
    }
    return;
  }

  const load: LoadFigure[] = [];
  const startup: StartupPoint[] = [];
  let micro: MicroFigure[] = [];
  let lmdbPuts: LmdbPutsFigure | { failure: string } = { failure: "not run" };
  let bulkRecords: BulkRecordsFigure | { failure: string } = { failure: "not run" };
  let evaluationAlone: EvaluationAloneFigure[] | { failure: string } = { failure: "not run" };
  let nativeFreeFailure: string | undefined;
  let storedData: StoredDataPoint[] = [];
  const stages: StageFigure[] = [];
  const extras: BenchReport["extras"] = [];
  let cluster: ClusterSection = skippedCluster("not run");
  let peers: PeersSection = skippedPeers(mode.name === "full" ? "not run" : "measured in full runs, or alone with --peers");
  const phase = async (name: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      lab.log(`${name} failed: ${(error as Error).stack ?? String(error)}`);
    }
  };

  try {
    // 1. In-process micro-benchmarks and the raw storage ceiling, before any server competes for the cores.
    await phase("micro-benchmarks", async () => {
      lab.log("micro-benchmarks");
      micro = [
        ...(await benchEvaluatorVsReference(mode.micro)),
        ...(await benchContextFromQuery(mode.micro)),
        ...(await benchRolloutHash(mode.micro)),
        ...(await benchSharedCopy(mode.micro)),
        ...(await benchEventCodec(mode.micro)),
        ...(await benchTrackingBulk(mode.micro)),
      ];
    });
    await phase("evaluation alone", async () => {
      evaluationAlone = benchEvaluationAlone(lab, mode.featureCounts);
    });
    await phase("raw LMDB puts", async () => {
      lmdbPuts = await benchLmdbPuts(lab);
    });
    await phase("raw puts of a bulk's records", async () => {
      bulkRecords = await benchBulkRecords(lab);
    });

    // 2. Transport ceilings.
    await phase("hello-world uWebSockets.js", async () => {
      load.push(...(await benchHelloWorld(lab, "uws")));
    });
    await phase("hello-world node:http", async () => {
      load.push(...(await benchHelloWorld(lab, "node")));
    });
    await phase("group-commit ceiling", async () => {
      load.push(await benchGroupCommitCeiling(lab));
      load.push(await benchEventRecordsCeiling(lab));
    });
    await phase("bulk ceiling", async () => {
      load.push(await benchBulkCeiling(lab));
    });
    await phase("transport of answer-sized bodies", async () => {
      load.push(...(await benchAnswerTransport(lab, mode.featureCounts)));
    });

    // 3. The service as deployed by default here (native, pool of cores − 1), on one seeded data dir.
    const data = tempDir("switchyard-bench-data-");
    try {
      const apps = new Map<number, SeededApp>();
      await phase("main scenarios", async () => {
        const service = await startService({ dataDir: data.path, workers: MAIN_WORKERS, native: true });
        startup.push({ label: `native, pool ${MAIN_WORKERS}, empty data dir`, startupMs: service.startupMs });
        try {
          const seedStarted = performance.now();
          for (const count of [...new Set([...mode.featureCounts, 10, 50])]) {
            const app = await seedApp(service.url, `bench-${count}-features`, featureDefinitions(count));
            // The users and companies of the load are known to the service, so evaluation merges remote context.
            for (const body of trafficEntitiesBodies()) await postBulk(service.url, app.publishableKey, body);
            await postBulk(service.url, app.publishableKey, bulkContextEntitiesBody());
            apps.set(count, app);
          }
          // Remote context reads the seeded users and companies once projected; the load starts from a caught-up projection.
          await waitCaughtUp(service.url);
          lab.log(`seeded ${[...apps.keys()].join(", ")} features in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
          const target: ServiceTarget = { baseUrl: service.url, server: { kind: "service", workers: MAIN_WORKERS, native: true, pid: service.pid }, apps };
          load.push(...(await benchEvaluation(lab, target)));
          load.push(...(await benchOfrep(lab, target)));
          load.push(...(await benchCompression(lab, target)));
          load.push(...(await benchContextSizes(lab, target)));
          load.push(...(await benchRules(lab, target)));
          load.push(...(await benchTracking(lab, service.url, target.server, apps.get(10)!)));
          load.push(...(await benchMixed(lab, target)));
        } finally {
          await service.stop();
        }
      });

      // 3b. Where the CPU of a distinct-context evaluation goes, stage by stage, from CPU profiles of the service.
      await phase("CPU per stage", async () => {
        for (const features of [10, 50].filter((count) => apps.has(count))) {
          const profileDir = tempDir("switchyard-bench-profile-");
          try {
            const service = await startService({ dataDir: data.path, workers: MAIN_WORKERS, native: true, nodeArgs: profilingNodeArgs(profileDir.path) });
            const figure = await measureStages(
              service,
              profileDir.path,
              { driver, requests: evaluateRequests(apps.get(features)!), connections: mode.connections, seconds: Math.max(2, mode.durationSeconds), scratchDir: scratch.path },
              { title: `GET /features/evaluated, ${features} features, distinct contexts (${evaluateId(features)}), pool ${MAIN_WORKERS}, profiled`, features, workers: MAIN_WORKERS },
            );
            lab.log(`stages at ${features} features: ${figure.totalUs.toFixed(1)} µs per request`);
            stages.push(figure);
          } finally {
            profileDir.remove();
          }
        }
      });

      // 4. The other executor arrangements on the same data.
      for (const arrangement of ARRANGEMENTS) {
        if (arrangement.workers === MAIN_WORKERS || !apps.has(50)) continue;
        await phase(`executor ${arrangement.name}`, async () => {
          const run = await benchArrangement(lab, arrangement, data.path, apps.get(50)!, apps.get(10)!);
          load.push(...run.figures);
          startup.push({ label: `native, ${arrangement.workers === 0 ? "inline" : `pool ${arrangement.workers}`}, ${[...apps.values()].reduce((sum, app) => sum + app.features, 0)} features stored`, startupMs: run.startupMs });
        });
      }
    } finally {
      data.remove();
    }

    // 5. The native-free twin.
    await phase("native-free", async () => {
      const result = await benchNativeFree(lab);
      load.push(...result.figures);
      nativeFreeFailure = result.failure;
      if (result.startupMs !== undefined) startup.push({ label: "native-free, empty data dir", startupMs: result.startupMs });
    });

    // 6. Memory and start-up against stored data.
    await phase("stored data", async () => {
      storedData = await benchStoredData(lab);
      for (const point of storedData) startup.push({ label: `native, pool 1, ${point.users.toLocaleString("en")} users + companies stored`, startupMs: point.startupMs });
    });

    // 7. Cluster mode against standalone (its own NATS servers and nodes, after everything else has stopped).
    await phase("cluster", async () => {
      try {
        cluster = await benchCluster(lab);
      } catch (error) {
        cluster = skippedCluster(`failed: ${(error as Error).message}`);
        throw error;
      }
    });

    // 8. Switchyard against Unleash and the Unleash Proxy (their own processes, after ours have stopped).
    if (mode.name === "full") {
      await phase("peers", async () => {
        peers = await benchPeers(lab, load.find((figure) => figure.id === HELLO_IDS.uws.get)?.value);
      });
    }

    // 9. Other owners' stand-alone benchmark scripts, run as they are (full runs only: their duration is theirs).
    if (mode.name === "full") runExtras(lab, extras);
  } finally {
    scratch.remove();
  }

  const finished = new Date();
  const cpuList = cpus();
  const measured: Measurements = {
    meta: {
      date: started.toISOString().slice(0, 10),
      host: hostname(),
      mode: mode.name,
      command: ["node", "dist/bench/run.js", ...process.argv.slice(2)].join(" "),
      startedAt: started.toISOString(),
      finishedAt: finished.toISOString(),
      elapsedSeconds: (finished.getTime() - started.getTime()) / 1000,
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
      cpus: { count: cpuList.length, model: cpuList[0]?.model.trim() ?? "unknown" },
      memoryBytes: totalmem(),
      loadAverage: { atStart: startLoad, atEnd: loadavg() },
      driver,
      load: {
        connections: mode.connections,
        threads: 1,
        durationSeconds: mode.durationSeconds,
        warmupSeconds: mode.warmupSeconds,
        repeats: mode.repeats,
        ...(driver !== "wrk" && mode.amount !== undefined ? { amount: mode.amount } : {}),
      },
      notes: notesFor(mode.name, startLoad),
    },
    micro,
    lmdbPuts,
    bulkRecords,
    evaluationAlone,
    eventRecordBytes: eventRecordSizes(),
    load,
    nativeFreeFailure,
    storedData,
    stages,
    startup,
    extras,
    cluster,
    peers,
  };
  const report = buildReport(measured);
  const outDir = resolve(cli.outDir ?? RESULTS_DIR);
  mkdirSync(outDir, { recursive: true });
  const base = join(outDir, `${report.meta.date}-${report.meta.host.replace(/[^A-Za-z0-9._-]/g, "_")}`);
  // NaN (a figure that could not be measured) becomes null in JSON.
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${base}.md`, renderMarkdown(report));
  lab.log(`done in ${report.meta.elapsedSeconds.toFixed(0)} s`);
  process.stdout.write(`${relative(process.cwd(), `${base}.json`)}\n${relative(process.cwd(), `${base}.md`)}\n`);
}

function notesFor(mode: string, startLoad: number[]): string[] {
  const notes = [];
  if (mode === "smoke") notes.push("Smoke run: a few requests per scenario to check the harness. These figures mean nothing.");
  if (mode === "quick") notes.push("Quick run: one short run per scenario; expect ±10–20 % between runs. Use the full run for decisions.");
  if ((startLoad[0] ?? 0) > 0.5) {
    notes.push(`The machine was busy when the run started (1-minute load average ${startLoad[0]!.toFixed(2)}): other work shares these cores, so figures are noisy.`);
  }
  return notes;
}

/**
 * Stand-alone benchmark scripts kept by the owners of other parts of src/, run as they are (with their own defaults)
 * when they exist, their output kept in the report.
 */
const EXTRA_SCRIPTS = ["evaluation/compile-vs-reference", "analytics/summary-vs-scan"] as const;

function runExtras(lab: Lab, extras: BenchReport["extras"]): void {
  for (const name of EXTRA_SCRIPTS) {
    const script = resolve(import.meta.dirname, `${name}.js`);
    if (!existsSync(script)) continue;
    lab.log(`running bench/${name}`);
    const result = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 10 * 60_000, maxBuffer: 16 * 1024 ** 2 });
    extras.push({ name: `bench/${name}`, exitCode: result.status, output: `${result.stdout ?? ""}${result.stderr ?? ""}`.slice(-20_000) });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
