/**
 * Switchyard against what a team runs today, on the same machine: Unleash 6.4.1 (frontend API) on PostgreSQL and the
 * Unleash Proxy 1.4.19 in front of it, serving the same 50 flags (created in Unleash through its admin API, then
 * brought over with Switchyard's own Unleash importer). Answers are compared before any timing; then each server gets
 * the same distinct-context load, one after another with a quiet gap, alternated (S U P, S U P, …).
 *
 * Skips, saying why in one line, without PostgreSQL or when unleash-server or the proxy cannot be installed.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Lab } from "../support/lab.js";
import { runLoad, type RequestSpec } from "../support/load.js";
import type { ModeName } from "../support/modes.js";
import { BENCH_ADMIN_TOKEN, startService, tempDir } from "../support/processes.js";
import { call } from "../support/seed.js";
import { TRAFFIC_REQUESTS } from "../support/fixtures.js";
import { TICK_MS } from "../support/thread-cpu.js";
import { prepareUnleash, startUnleash, UNLEASH_CLIENT_TOKEN, UNLEASH_FRONTEND_TOKEN, type RunningUnleash } from "../support/unleash.js";
import { prepareUnleashProxy, startUnleashProxy, type RunningProxy } from "../support/unleash-proxy.js";
import { MAIN_WORKERS } from "../workers/executor-arrangements.js";
import { compareAnswers, fromSwitchyardAnswer, fromUnleashAnswer, type AgreementReport, type SampledAnswers } from "./agreement.js";
import { CONTEXT_MAPPING, createPeerFlags, PEER_FEATURES, peerContexts, switchyardQuery, unleashQuery, type PeerContext } from "./flag-set.js";
import { peerFigures, peerGoals, skippedPeers, type PeerName, type PeerRun, type PeersSection } from "./model.js";

/** How long each run lasts, the gap before it, the rounds of S U P, and the contexts checked before timing. */
const TIMING: Readonly<Record<ModeName, { seconds: number; warmupSeconds: number; gapSeconds: number; rounds: number; sample: number }>> = {
  full: { seconds: 10, warmupSeconds: 5, gapSeconds: 5, rounds: 3, sample: 500 },
  quick: { seconds: 2, warmupSeconds: 1, gapSeconds: 1, rounds: 2, sample: 200 },
  smoke: { seconds: 1, warmupSeconds: 1, gapSeconds: 1, rounds: 2, sample: 100 },
};

interface Target {
  peer: PeerName;
  baseUrl: string;
  requests: RequestSpec[];
  pid: number;
  /** PostgreSQL's data dir, for Unleash: its processes' CPU is counted apart. */
  pgDataDir?: string;
}

/** Measures the peers, or answers why not; never throws. `helloWorldRps` (same run, same machine) bounds a miss. */
export async function benchPeers(lab: Lab, helloWorldRps?: number): Promise<PeersSection> {
  const unleashReady = prepareUnleash();
  if (!unleashReady.ok) return skip(lab, unleashReady.reason);
  const proxyReady = prepareUnleashProxy();
  if (!proxyReady.ok) return skip(lab, proxyReady.reason);
  const timing = TIMING[lab.mode.name];
  const data = tempDir("switchyard-bench-peers-");
  let unleash: RunningUnleash | undefined;
  let proxy: RunningProxy | undefined;
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    lab.log("peers: starting Unleash 6.4.1 on PostgreSQL and creating the flags");
    unleash = await startUnleash(unleashReady);
    await createPeerFlags(unleash);
    service = await startService({ dataDir: data.path, workers: MAIN_WORKERS, native: true });
    const imported = await importIntoSwitchyard(service.url, unleash.url, unleash.token);
    proxy = await startUnleashProxy(proxyReady, unleash.url, UNLEASH_CLIENT_TOKEN);
    lab.log(`peers: imported ${PEER_FEATURES} flags (warnings ${JSON.stringify(imported.warnings)}); the proxy is up`);

    const contexts = peerContexts(lab.mode.name === "smoke" ? 5_000 : TRAFFIC_REQUESTS);
    const targets: Target[] = [
      { peer: "switchyard", baseUrl: service.url, pid: service.pid, requests: requestsFor(contexts, "/features/evaluated", switchyardQuery, `Bearer ${imported.publishableKey}`) },
      { peer: "unleash", baseUrl: unleash.url, pid: unleash.pid, pgDataDir: unleash.pgDataDir, requests: requestsFor(contexts, "/api/frontend", unleashQuery, UNLEASH_FRONTEND_TOKEN) },
      { peer: "proxy", baseUrl: proxy.url, pid: proxy.pid, requests: requestsFor(contexts, "/proxy", unleashQuery, proxy.clientKey) },
    ];

    await untilUnleashAnswersLikeTheProxy(targets);
    const samples: SampledAnswers[] = [];
    for (const [index, context] of contexts.slice(0, timing.sample).entries()) {
      const [switchyard, unleashAnswer, proxyAnswer] = await Promise.all(targets.map((target) => answerOf(target, index)));
      samples.push({ context, switchyard: fromSwitchyardAnswer(switchyard), unleash: fromUnleashAnswer(unleashAnswer), proxy: fromUnleashAnswer(proxyAnswer) });
    }
    const agreement = compareAnswers(samples, imported.rehashed);
    if (agreement.disagreements.length > 0) {
      return skip(lab, `the servers disagree, so nothing was timed: ${agreement.disagreements.slice(0, 3).join("; ")}`, agreement);
    }
    lab.log(`peers: the three agree on ${agreement.contexts} contexts (${agreement.exactComparisons} exact comparisons, ${agreement.sharedFlags} rehashed flags by share)`);

    const spec = (target: Target, seconds: number) => ({ baseUrl: target.baseUrl, requests: target.requests, connections: lab.mode.connections, durationSeconds: seconds });
    for (const target of targets) {
      await pause(timing.gapSeconds);
      await runLoad(lab.driver, spec(target, timing.warmupSeconds), lab.scratchDir);
    }
    const runs: PeerRun[] = [];
    for (let round = 1; round <= timing.rounds; round++) {
      for (const target of targets) {
        await pause(timing.gapSeconds);
        const before = cpuTicks(target);
        const load = await runLoad(lab.driver, spec(target, timing.seconds), lab.scratchDir);
        const after = cpuTicks(target);
        const perRequest = (ticks: number) => (load.requests > 0 ? (ticks * TICK_MS * 1000) / load.requests : Number.NaN);
        const run: PeerRun = {
          peer: target.peer,
          round,
          load,
          serverCpuUsPerRequest: perRequest(after.server - before.server),
          ...(target.pgDataDir !== undefined ? { databaseCpuUsPerRequest: perRequest(after.database - before.database) } : {}),
        };
        runs.push(run);
        lab.log(
          `peers round ${round} ${target.peer}: ${Math.round(load.rps).toLocaleString("en")} req/s, p50 ${load.latencyMs.p50.toFixed(2)} ms, p99 ${load.latencyMs.p99.toFixed(2)} ms, ` +
            `${run.serverCpuUsPerRequest.toFixed(1)} µs CPU per request${load.errors > 0 ? `, ${load.errors} errors` : ""}`,
        );
      }
    }
    const figures = peerFigures(runs);
    return {
      features: PEER_FEATURES,
      connections: lab.mode.connections,
      durationSeconds: timing.seconds,
      quietGapSeconds: timing.gapSeconds,
      rounds: timing.rounds,
      contexts: contexts.length,
      agreement,
      importWarnings: imported.warnings,
      runs,
      figures,
      goals: peerGoals(figures, helloWorldRps),
    };
  } catch (error) {
    return skip(lab, `failed: ${(error as Error).message}`);
  } finally {
    await proxy?.stop();
    await service?.stop();
    await unleash?.stop();
    data.remove();
  }
}

function skip(lab: Lab, reason: string, agreement?: AgreementReport): PeersSection {
  lab.log(`peers skipped: ${reason}`);
  return skippedPeers(reason, agreement);
}

const pause = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

function requestsFor(contexts: readonly PeerContext[], route: string, query: (context: PeerContext) => string, authorization: string): RequestSpec[] {
  return contexts.map((context) => ({ method: "GET", path: `${route}?${query(context)}`, headers: { authorization } }));
}

async function answerOf(target: Target, index: number): Promise<unknown> {
  const request = target.requests[index]!;
  const response = await fetch(target.baseUrl + request.path, { headers: request.headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${target.peer} GET ${request.path.split("?")[0]} answered ${response.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as unknown;
}

/** Unleash's frontend API builds its view of the flags on the first call with a token: wait until it has them. */
async function untilUnleashAnswersLikeTheProxy(targets: readonly Target[]): Promise<void> {
  const [, unleash, proxy] = targets;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const [theirs, proxied] = await Promise.all([answerOf(unleash!, 0), answerOf(proxy!, 0)]);
    if (JSON.stringify([...fromUnleashAnswer(theirs)]) === JSON.stringify([...fromUnleashAnswer(proxied)]) || Date.now() > deadline) return;
    await pause(0.5);
  }
}

/** Creates the app and imports the flags from Unleash through the management API, as an operator would. */
async function importIntoSwitchyard(baseUrl: string, unleashUrl: string, unleashToken: string): Promise<{ publishableKey: string; warnings: Record<string, number>; rehashed: Set<string> }> {
  const created = (await call(baseUrl, "POST", "/admin/apps", BENCH_ADMIN_TOKEN, { name: "peers" })) as { app: { id: string; environments: { name: string; publishableKey: string }[] } };
  const production = created.app.environments.find((environment) => environment.name === "production")!;
  const answer = (await call(baseUrl, "POST", `/admin/apps/${encodeURIComponent(created.app.id)}/import/unleash`, BENCH_ADMIN_TOKEN, {
    url: unleashUrl,
    token: unleashToken,
    environments: { production: "production" },
    contextMapping: CONTEXT_MAPPING,
  })) as { summary: { created: number }; warnings: { key: string; code: string }[] };
  if (answer.summary.created !== PEER_FEATURES) throw new Error(`the import created ${answer.summary.created} flags, not ${PEER_FEATURES}`);
  const warnings: Record<string, number> = {};
  for (const warning of answer.warnings) warnings[warning.code] = (warnings[warning.code] ?? 0) + 1;
  const unexpected = answer.warnings.filter((warning) => !["ROLLOUT_REHASHED", "VARIANTS_REHASHED"].includes(warning.code));
  if (unexpected.length > 0) throw new Error(`the import left something out: ${unexpected.map((warning) => `${warning.key} ${warning.code}`).join(", ")}`);
  return { publishableKey: production.publishableKey, warnings, rehashed: new Set(answer.warnings.filter((warning) => warning.code === "ROLLOUT_REHASHED").map((warning) => warning.key)) };
}

/** Clock ticks of the server's process (all its threads, ended ones included) and of PostgreSQL's processes. */
function cpuTicks(target: Target): { server: number; database: number } {
  const server = processTicks(target.pid);
  if (target.pgDataDir === undefined) return { server, database: 0 };
  try {
    const postmaster = Number(readFileSync(join(target.pgDataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    let database = processTicks(postmaster);
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      if (parentOf(Number(entry)) === postmaster) database += processTicks(Number(entry));
    }
    return { server, database };
  } catch {
    return { server, database: Number.NaN };
  }
}

function statFields(pid: number): string[] | undefined {
  try {
    // Fields after the parenthesised command: ppid is the 2nd, utime and stime the 12th and 13th.
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  } catch {
    return undefined;
  }
}

function processTicks(pid: number): number {
  const fields = statFields(pid);
  return fields === undefined ? Number.NaN : Number(fields[11]) + Number(fields[12]);
}

function parentOf(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields === undefined ? undefined : Number(fields[1]);
}
