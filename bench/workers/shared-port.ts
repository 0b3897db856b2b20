/**
 * HTTP on every core instead of one: a service process per core, all serving one data dir and listening on one port
 * (the kernel shares the connections out, SO_REUSEPORT being uWebSockets.js's default on Linux), each running its
 * jobs inline (SWITCHYARD_WORKERS=0), against the default arrangement (one process: HTTP on the main thread, jobs in
 * a pool of cores − 1 worker threads). Alternated round by round, each round with the bare uWebSockets.js hello-world
 * GET measured beside it, so that the VM's slow and fast stretches fall on both.
 *
 * The design keeps HTTP on one thread and hands evaluation to the pool (docs/ARCHITECTURE.md); this measures what
 * that choice costs and buys on this machine, for the record (docs/BENCHMARKS.md). It is not part of `npm run bench`.
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { get } from "node:http";
import { availableParallelism } from "node:os";
import { freePorts } from "../support/free-ports.js";
import { detectDriver, runLoad, type LoadResult, type RequestSpec } from "../support/load.js";
import { startHelloServer, startService, tempDir, type RunningService } from "../support/processes.js";
import { postBulk, seedApp, type SeededApp } from "../support/seed.js";
import { featureDefinitions, trafficEntitiesBodies } from "../support/fixtures.js";
import { evaluateRequests, eventRequests, mixedRequests } from "../serving/requests.js";

const USAGE = `node dist/bench/workers/shared-port.js [--scenario evaluate|mixed|event] [--features N] [--rounds N] [--seconds N]

A service process per core on one data dir and one port, jobs inline in each (HTTP on every core), against the
default arrangement (one process, HTTP on the main thread, jobs in a pool of cores − 1 workers); alternated, with the
bare uWebSockets.js hello-world GET measured in every round. Prints req/s, p50 and p99 of each, and each as a share
of its round's hello-world. Loads only 127.0.0.1.
  --scenario S   evaluate (GET /features/evaluated, distinct contexts; default), mixed (80 % of those, 20 % POST
                 /event) or event (POST /event)
  --features N   features in the ruleset (default 10)
  --rounds N     rounds, each measuring all three (default 3)
  --seconds N    length of each measured run, after 2 s of warm-up (default 5)
`;

type Scenario = "evaluate" | "mixed" | "event";

const CORES = availableParallelism();
type Arrangement = "default" | "shared-port";

function requestsFor(scenario: Scenario, app: SeededApp): RequestSpec[] {
  if (scenario === "mixed") return mixedRequests(app);
  if (scenario === "event") return eventRequests(app);
  return evaluateRequests(app);
}

/** Starts an arrangement on a fresh data dir, seeded with the bench's rules and its 10,000 users × 200 companies. */
async function startArrangement(arrangement: Arrangement, scenario: Scenario, features: number) {
  const data = tempDir(`switchyard-bench-shared-port-${arrangement}-`);
  const services: RunningService[] = [];
  try {
    if (arrangement === "default") services.push(await startService({ dataDir: data.path, workers: Math.max(1, CORES - 1), native: true }));
    else {
      const [port] = await freePorts(1);
      for (let index = 0; index < CORES; index++) services.push(await startService({ dataDir: data.path, workers: 0, native: true, env: { SWITCHYARD_PORT: String(port) } }));
    }
    const url = services[0]!.url;
    const app = await seedApp(url, "shared-port", featureDefinitions(features));
    for (const body of trafficEntitiesBodies()) await postBulk(url, app.publishableKey, body);
    // The other processes learn of the seeded rules by polling the shared data dir.
    await waitUntilEveryAnswerHasRules(url, evaluateRequests(app));
    return { url, requests: requestsFor(scenario, app), stop: () => stopAll(services, data.remove) };
  } catch (error) {
    await stopAll(services, data.remove);
    throw error;
  }
}

async function stopAll(services: readonly RunningService[], remove: () => void): Promise<void> {
  for (const service of services) await service.stop();
  remove();
}

/** Polls until 40 answers in a row, over fresh connections shared out by the kernel, carry the seeded rules. */
async function waitUntilEveryAnswerHasRules(url: string, requests: readonly RequestSpec[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (let inARow = 0, index = 0; inARow < 40; index++) {
    if (Date.now() > deadline) throw new Error("a process never served the seeded rules");
    const request = requests[index % requests.length]!;
    const { status, body } = await getOnFreshConnection(`${url}${request.path}`, request.headers);
    inARow = status === 200 && body.includes('"feature-0"') ? inARow + 1 : 0;
    if (inARow === 0) await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

/** One GET on a connection of its own (fetch would keep reusing one, and so reach one process only). */
function getOnFreshConnection(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolveGet, reject) => {
    get(url, { headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolveGet({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      response.on("error", reject);
    }).on("error", reject);
  });
}

/** 2 s of warm-up (discarded), then the measured run, at 50 connections like the bench's. */
async function warmThenMeasure(baseUrl: string, requests: readonly RequestSpec[], seconds: number, scratch: string): Promise<LoadResult> {
  const spec = { baseUrl, requests, connections: 50 };
  await runLoad(detectDriver(), { ...spec, durationSeconds: 2 }, scratch);
  return runLoad(detectDriver(), { ...spec, durationSeconds: seconds }, scratch);
}

async function measureHello(seconds: number, scratch: string): Promise<LoadResult> {
  const hello = await startHelloServer("uws");
  try {
    return await warmThenMeasure(hello.url, [{ method: "GET", path: "/hello", headers: {} }], seconds, scratch);
  } finally {
    await hello.stop();
  }
}

async function benchSharedPort(options: { scenario: Scenario; features: number; rounds: number; seconds: number }): Promise<void> {
  const scratch = tempDir("switchyard-bench-shared-port-load-");
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const hello = await measureHello(options.seconds, scratch.path);
      print(`round ${round} hello-world: ${Math.round(hello.rps).toLocaleString("en")} req/s`);
      for (const arrangement of ["default", "shared-port"] as const) {
        const running = await startArrangement(arrangement, options.scenario, options.features);
        try {
          const result = await warmThenMeasure(running.url, running.requests, options.seconds, scratch.path);
          const share = ((result.rps / hello.rps) * 100).toFixed(1);
          print(
            `round ${round} ${arrangement}: ${Math.round(result.rps).toLocaleString("en")} req/s (${share} % of hello-world), ` +
              `p50 ${result.latencyMs.p50.toFixed(2)} ms, p99 ${result.latencyMs.p99.toFixed(2)} ms, ${result.errors} errors`,
          );
        } finally {
          await running.stop();
        }
      }
    }
  } finally {
    scratch.remove();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scenario: { type: "string", default: "evaluate" },
      features: { type: "string", default: "10" },
      rounds: { type: "string", default: "3" },
      seconds: { type: "string", default: "5" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const scenario = values.scenario as Scenario;
  if (!["evaluate", "mixed", "event"].includes(scenario)) throw new Error(`--scenario must be evaluate, mixed or event\n\n${USAGE}`);
  const numbers = [values.features, values.rounds, values.seconds].map(Number);
  if (!numbers.every((value) => Number.isInteger(value) && value > 0)) throw new Error(`--features, --rounds and --seconds take whole numbers above 0\n\n${USAGE}`);
  const [features, rounds, seconds] = numbers as [number, number, number];
  print(`${scenario}, ${features} features, ${rounds} round(s) of ${seconds} s (node dist/bench/workers/shared-port.js)`);
  await benchSharedPort({ scenario, features, rounds, seconds });
}

function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
