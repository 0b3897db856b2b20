/**
 * Cluster mode against standalone, in one run: a real three-server nats-server JetStream cluster on 127.0.0.1
 * (started once), one Switchyard node standalone and one in cluster mode, measured one after the other with the same
 * load (distinct-context evaluation, POST /event); the CPU each spends per request (the node, and the NATS servers
 * for the cluster); the propagation delay of a flag change to another node's SSE stream; and the catch-up rate of a
 * node that starts empty. Skips, saying why, when nats-server is missing.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { natsServerBinary, startNatsCluster, type NatsCluster } from "../support/nats-cluster.js";
import { evaluateRequests, eventRequests } from "../serving/requests.js";
import { bulkContextEntitiesBody, featureDefinitions, trafficEntitiesBodies } from "../support/fixtures.js";
import { measure, type Lab, type LoadFigure, type ServerInfo } from "../support/lab.js";
import { runLoad, type RequestSpec } from "../support/load.js";
import { startService, tempDir, type RunningService } from "../support/processes.js";
import { postBulk, seedApp, type SeededApp } from "../support/seed.js";
import { MAIN_WORKERS } from "../workers/executor-arrangements.js";
import { skippedCluster, type ClusterRow, type ClusterSection, type CpuPerRequest } from "./model.js";
import { measureCatchUp, measurePropagation } from "./propagation.js";

/** Feature counts of the evaluation comparison (the stage-CPU target is set at 50). */
const FEATURE_COUNTS = [10, 50] as const;
const PROPAGATION_CHANGES = { full: 50, quick: 20, smoke: 3 } as const;
const CATCH_UP_EVENTS = { full: 100_000, quick: 20_000, smoke: 1_000 } as const;

export const clusterEvaluateId = (kind: Kind, features: number) => `${kind}-evaluate-${features}`;
export const clusterEventId = (kind: Kind) => `${kind}-event`;
type Kind = "cluster" | "standalone";

/** Why the benchmark cannot run here, or undefined; with the version it would use. */
export function natsAvailability(): { missing: string } | { version: string } {
  const result = spawnSync(natsServerBinary(), ["--version"], { encoding: "utf8" });
  if (result.error !== undefined || result.status !== 0) {
    return { missing: `nats-server not found (${result.error?.message ?? `exit ${result.status}`}); install it (Debian: apt-get install nats-server) to measure cluster mode` };
  }
  return { version: result.stdout.trim() };
}

/** CPU time (user + system) of a whole process so far, in ms, from /proc/<pid>/stat. */
function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime are fields 14 and 15 of stat, the 12th and 13th after the command; clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** A load scenario measured with the CPU its server (and NATS) spent on the measured runs. */
async function measureWithCpu(
  lab: Lab,
  service: RunningService,
  nats: NatsCluster | undefined,
  scenario: { id: string; title: string; requests: readonly RequestSpec[]; server: ServerInfo },
): Promise<{ figure: LoadFigure; cpu: CpuPerRequest }> {
  const natsPids = () => nats?.servers.map((server) => server.pid()) ?? [];
  // Warm-up outside the CPU window, so the window holds exactly the measured runs' requests.
  await runLoad(
    lab.driver,
    {
      baseUrl: service.url,
      requests: scenario.requests,
      connections: lab.mode.connections,
      durationSeconds: lab.mode.warmupSeconds,
      ...(lab.driver !== "wrk" && lab.mode.warmupAmount !== undefined ? { amount: lab.mode.warmupAmount } : {}),
    },
    lab.scratchDir,
  );
  const nodeBefore = processCpuMs(service.pid);
  const natsBefore = natsPids().map(processCpuMs);
  const figure = await measure(lab, { id: scenario.id, section: "cluster", title: scenario.title, server: scenario.server, baseUrl: service.url, requests: scenario.requests, warmUp: false });
  const nodeMs = processCpuMs(service.pid) - nodeBefore;
  const natsMs = natsPids()
    .map(processCpuMs)
    .reduce((sum, after, index) => sum + after - (natsBefore[index] ?? 0), 0);
  const requests = figure.runs.reduce((sum, run) => sum + run.requests, 0);
  return {
    figure,
    cpu: { id: scenario.id, label: scenario.title, requests, nodeUs: (nodeMs * 1000) / requests, natsUs: (natsMs * 1000) / requests },
  };
}

/** Seeds one app per feature count, with the traffic's users and companies stored (remote context). */
async function seed(url: string, kind: Kind): Promise<Map<number, SeededApp>> {
  const apps = new Map<number, SeededApp>();
  for (const count of FEATURE_COUNTS) {
    const app = await seedApp(url, `bench-${kind}-${count}-features`, featureDefinitions(count));
    for (const body of trafficEntitiesBodies()) await postBulk(url, app.publishableKey, body);
    await postBulk(url, app.publishableKey, bulkContextEntitiesBody());
    apps.set(count, app);
  }
  return apps;
}

/** The load of one node: evaluation at each feature count, then POST /event. */
async function loadOf(lab: Lab, service: RunningService, nats: NatsCluster | undefined, kind: Kind, apps: Map<number, SeededApp>) {
  const server: ServerInfo = { kind: "service", workers: MAIN_WORKERS, native: true };
  const where = kind === "cluster" ? "cluster node (R3 over 3 nats-servers)" : "standalone node";
  const results = [];
  for (const features of FEATURE_COUNTS) {
    results.push(
      await measureWithCpu(lab, service, nats, {
        id: clusterEvaluateId(kind, features),
        title: `GET /features/evaluated, ${features} features, distinct contexts, ${where}`,
        requests: evaluateRequests(apps.get(features)!),
        server,
      }),
    );
  }
  results.push(
    await measureWithCpu(lab, service, nats, {
      id: clusterEventId(kind),
      title: `POST /event, one event per call, ${where} (answered after ${kind === "cluster" ? "JetStream's quorum ack" : "commit"})`,
      requests: eventRequests(apps.get(10)!),
      server,
    }),
  );
  return results;
}

export async function benchCluster(lab: Lab): Promise<ClusterSection> {
  const availability = natsAvailability();
  if ("missing" in availability) {
    lab.log(`cluster: skipped, ${availability.missing}`);
    return skippedCluster(availability.missing);
  }
  lab.log(`cluster: starting 3 × ${availability.version}`);
  const nats = await startNatsCluster();
  const dirs: ReturnType<typeof tempDir>[] = [];
  const dir = () => {
    const made = tempDir("switchyard-bench-cluster-");
    dirs.push(made);
    return made.path;
  };
  const clusterEnv = (nodeId: string, prefix: string) => ({
    SWITCHYARD_CLUSTER_URL: nats.urls,
    SWITCHYARD_NODE_ID: nodeId,
    SWITCHYARD_CLUSTER_PREFIX: prefix,
    SWITCHYARD_CLUSTER_REPLICAS: "3",
  });
  try {
    // Standalone first, alone on the machine (the NATS servers idle meanwhile).
    const standalone = await startService({ dataDir: dir(), workers: MAIN_WORKERS, native: true });
    let standaloneResults;
    try {
      standaloneResults = await loadOf(lab, standalone, undefined, "standalone", await seed(standalone.url, "standalone"));
    } finally {
      await standalone.stop();
    }

    const prefix = `B${randomBytes(4).toString("hex")}`;
    const a = await startService({ dataDir: dir(), workers: MAIN_WORKERS, native: true, env: clusterEnv("a", prefix) });
    let clusterResults;
    let propagation: ClusterSection["propagation"];
    try {
      const apps = await seed(a.url, "cluster");
      clusterResults = await loadOf(lab, a, nats, "cluster", apps);
      // A second node, for the delay of a change made through A to reach a stream held on B.
      const b = await startService({ dataDir: dir(), workers: MAIN_WORKERS, native: true, env: clusterEnv("b", prefix) });
      try {
        propagation = await measurePropagation(a.url, b.url, apps.get(10)!, PROPAGATION_CHANGES[lab.mode.name]);
        lab.log(`cluster: propagation p50 ${propagation.p50Ms.toFixed(1)} ms, p99 ${propagation.p99Ms.toFixed(1)} ms over ${propagation.changes} changes`);
      } catch (error) {
        propagation = { failure: (error as Error).message };
        lab.log(`cluster: propagation FAILED ${propagation.failure}`);
      } finally {
        await b.stop();
      }
    } finally {
      await a.stop();
    }

    // Catch-up on streams of its own, so the backlog holds a known number of events.
    let catchUp: ClusterSection["catchUp"];
    const catchUpPrefix = `C${randomBytes(4).toString("hex")}`;
    try {
      const writer = await startService({ dataDir: dir(), workers: MAIN_WORKERS, native: true, env: clusterEnv("w", catchUpPrefix) });
      try {
        const app = await seedApp(writer.url, "bench-catch-up", featureDefinitions(10));
        const nc = await connect({ servers: nats.urls.split(",") });
        try {
          const jsm = await jetstreamManager(nc);
          const lastSequence = async () => (await jsm.streams.info(`${catchUpPrefix}_TRACKING`)).state.last_seq;
          catchUp = await measureCatchUp(writer.url, app, CATCH_UP_EVENTS[lab.mode.name], clusterEnv("fresh", catchUpPrefix), MAIN_WORKERS, lastSequence);
        } finally {
          await nc.close();
        }
        lab.log(`cluster: a fresh node applied ${catchUp.events} events in ${catchUp.secondsFromSpawn.toFixed(1)} s (${Math.round(catchUp.eventsPerSecond)} events/s)`);
      } finally {
        await writer.stop();
      }
    } catch (error) {
      catchUp = { failure: (error as Error).message };
      lab.log(`cluster: catch-up FAILED ${catchUp.failure}`);
    }

    return summarise(availability.version, standaloneResults, clusterResults, propagation, catchUp);
  } finally {
    await nats.stop();
    for (const made of dirs) made.remove();
  }
}

type Results = Awaited<ReturnType<typeof loadOf>>;

function summarise(version: string, standalone: Results, cluster: Results, propagation: ClusterSection["propagation"], catchUp: ClusterSection["catchUp"]): ClusterSection {
  const rows: ClusterRow[] = [];
  for (let index = 0; index < cluster.length; index++) {
    const ours = cluster[index]!;
    const theirs = standalone[index]!;
    const label = ours.figure.title.replace(/, cluster node.*$/, "");
    rows.push(
      { id: `${ours.figure.id}-throughput`, label, unit: ours.figure.unit, cluster: ours.figure.value, standalone: theirs.figure.value, ratio: ours.figure.value / theirs.figure.value },
      { id: `${ours.figure.id}-p50`, label: `${label} — p50 latency`, unit: "ms", cluster: ours.figure.latencyMs.p50, standalone: theirs.figure.latencyMs.p50, ratio: ours.figure.latencyMs.p50 / theirs.figure.latencyMs.p50 },
      {
        id: `${ours.figure.id}-cpu`,
        label: `${label} — server CPU per request (cluster: node + NATS)`,
        unit: "µs",
        cluster: ours.cpu.nodeUs + ours.cpu.natsUs,
        standalone: theirs.cpu.nodeUs,
        ratio: (ours.cpu.nodeUs + ours.cpu.natsUs) / theirs.cpu.nodeUs,
      },
    );
  }
  const event = cluster.at(-1)!;
  const standaloneEvent = standalone.at(-1)!;
  return {
    natsVersion: version,
    load: [...standalone, ...cluster].map((result) => result.figure),
    rows,
    cpu: [...standalone, ...cluster].map((result) => result.cpu),
    replicationCpuUsPerEvent: event.cpu.nodeUs + event.cpu.natsUs - standaloneEvent.cpu.nodeUs,
    replicationLatencyP50Ms: event.figure.latencyMs.p50 - standaloneEvent.figure.latencyMs.p50,
    propagation,
    catchUp,
  };
}
