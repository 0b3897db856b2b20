/**
 * `node dist/bench/probe.js <scenario> [options]`: one load scenario against a freshly seeded service (started and
 * seeded as the benchmark runner does), reporting the rate and the CPU each thread of the server spent per request,
 * read from /proc/<pid>/task/<tid>/stat. `--help` lists scenarios and options.
 *
 * For finding where time goes: V8's CPU profiler books uWebSockets.js's native work as "(idle)", and a thread that
 * is busy only part of the time says the load is bound by latency, not by that thread. Linux only (/proc).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { bulkContextEntitiesBody, eventBody, featureDefinitions, trafficEntitiesBodies } from "./support/fixtures.js";
import { detectDriver, type Driver, type RequestSpec } from "./support/load.js";
import { startGroupCommitServer, startHelloServer, startService, tempDir, type Listening } from "./support/processes.js";
import { waitCaughtUp } from "./support/projection.js";
import { bareCounterpart, ledgerLines, probeRuns, type ProbeRun } from "./support/probe-runs.js";
import { postBulk, seedApp, type SeededApp } from "./support/seed.js";
import { measureStages, profilingNodeArgs } from "./serving/evaluation-stages.js";
import { evaluateKeyRequests, ofrepBulkRequests, ofrepFlagRequests } from "./serving/ofrep-routes.js";
import { STAGES } from "./support/cpu-stages.js";
import { BULK_SIZE, bareBulkMixedRequests, bareEventRequests, bulkMixedRequests, bulkRequests, evaluateRequests, eventRequests, mixedRequests, type ContextTraffic } from "./serving/requests.js";

const SCENARIOS = [
  "evaluate-10",
  "evaluate-50",
  "evaluate-200",
  "evaluate-1000",
  "enabled-50",
  "evaluate-50-key",
  "ofrep-bulk-10",
  "ofrep-bulk-50",
  "ofrep-flag-50",
  "mixed",
  "event",
  "bulk",
  "bulk-mixed",
  "health",
  "hello-get",
  "hello-get-deferred",
  "hello-post",
  "group-commit",
  "bulk-ceiling",
  "event-records",
] as const;
type Scenario = (typeof SCENARIOS)[number];

const USAGE = `node dist/bench/probe.js <scenario> [options]

Runs one load scenario against a freshly seeded service on 127.0.0.1 and prints the rate, latency and the CPU each
server thread spent per request (from /proc; Linux only).

Scenarios:
  evaluate-N     GET /features/evaluated with N features (10, 50, 200, 1000)
  enabled-50     GET /features/enabled with 50 features (records an evaluate event per enabled feature)
  evaluate-50-key  GET /features/evaluated?key=, 50 features, one in turn (the single-flag OFREP case's counterpart)
  ofrep-bulk-N   POST /ofrep/v1/evaluate/flags with N features (10, 50), the distinct contexts as JSON bodies
  ofrep-flag-50  POST /ofrep/v1/evaluate/flags/{key}, 50 features, one in turn (records a check event each)
  mixed          80 % GET /features/evaluated (50 features, distinct contexts), 20 % POST /event
  event          POST /event, one event per request
  bulk           POST /bulk, ${BULK_SIZE} events per body, 8 in flight; also items projected per second (until caught up)
  bulk-mixed     POST /bulk, ${BULK_SIZE} items per body: 80 % events, 10 % users, 10 % companies, 8 in flight; projected too
  health         GET /health: the service's own cost of a request that does nothing
  hello-get      a bare uWebSockets.js hello-world GET (the transport ceiling)
  hello-get-deferred  the same answer a turn later, as the service answers from its pool (evaluate-N's requests,
                 their queries copied, one turn's answers under cork): the price of answering outside the handler
  hello-post     a bare uWebSockets.js hello-world POST
  group-commit   a bare uWebSockets.js POST that commits each body to LMDB before answering
  bulk-ceiling   the same, storing each item of bulk-mixed bodies on its own (the /bulk ceiling)
  event-records  the same, storing each /event body with what it is projected to (user, company, analytics cells), no routing

Options:
  --workers N        SWITCHYARD_WORKERS of the service (default 1; 0 runs jobs inline)
  --cache-ms N       SWITCHYARD_EVALUATION_CACHE_MS (default 1000, the service's default)
  --contexts KIND    distinct (default: random pairs of 10,000 users × 200 companies) or repeated (1,000 users in turn)
  --seconds N        length of the measured run (default 5, after 2 s of warm-up)
  --repeats N        measured runs on the same server, each reported (default 1)
  --rate N           offer N requests/s instead of as many as answers allow (for latency at a given load)
  --connections N    connections (default 50; bulk 8)
  --driver NAME      wrk (default when installed) or autocannon
  --profile DIR      run the service with --cpu-prof into DIR (one .cpuprofile per thread)
  --body-bytes N     hello-get, hello-get-deferred: answer with a body of N bytes (the transport's cost of a large answer)
  --node-arg ARG     an option for the service's node, e.g. --perf-basic-prof for perf (repeatable)
  --accept-encoding V  evaluate-N: send Accept-Encoding: V (large answers come compressed)
  --stages           evaluate-N: CPU per request stage by stage, from the service's CPU profiles (one measured run)
  --ledger           evaluate-N, enabled-50, event, bulk-mixed: then the bare server sending the same bytes (or
                     committing the same bodies) under the same load, and the ledger: each thread's CPU per request
                     beside the bare server's, the ratio and the ceiling the front-end thread sets
  --env K=V          further SWITCHYARD_* settings (repeatable)
  --service-build DIR  run the service of another checkout's build (DIR/dist/src/cli/main.js) under this harness:
                     before/after comparisons (its job workers show under "other" if it does not name its threads)
  --help             this text
`;

interface ProbeOptions {
  /** Options for the service's node (e.g. --perf-basic-prof, for `perf record`). */
  nodeArgs: string[];
  /** hello-get only: the answer's size. */
  bodyBytes: number | undefined;
  workers: number;
  cacheMs: number;
  contexts: ContextTraffic;
  profileDir: string | undefined;
  env: Record<string, string>;
  /** Another build's CLI (--service-build). */
  cli: string | undefined;
}

async function serverFor(scenario: Scenario, options: ProbeOptions, dataDir: string): Promise<{ server: Listening; requests: RequestSpec[] }> {
  if (scenario === "group-commit") {
    const server = await startGroupCommitServer(dataDir);
    return { server, requests: [{ method: "POST", path: "/event", headers: { "Content-Type": "application/json" }, body: JSON.stringify(eventBody(1)) }] };
  }
  if (scenario === "event-records") {
    const server = await startGroupCommitServer(dataDir, "tracking");
    return { server, requests: bareEventRequests() };
  }
  if (scenario === "bulk-ceiling") {
    const server = await startGroupCommitServer(dataDir, "items");
    return { server, requests: bareBulkMixedRequests() };
  }
  if (scenario === "hello-get-deferred") {
    const server = await startHelloServer("uws-deferred", options.bodyBytes);
    return { server, requests: evaluateRequests({ appId: "bare", environmentId: "bare", publishableKey: "pub_bare", secretKey: "", trackingKey: "", features: 0 }) };
  }
  if (scenario === "hello-get" || scenario === "hello-post") {
    const server = await startHelloServer("uws", scenario === "hello-get" ? options.bodyBytes : undefined);
    const requests: RequestSpec[] =
      scenario === "hello-get"
        ? [{ method: "GET", path: "/hello", headers: {} }]
        : [{ method: "POST", path: "/event", headers: { "Content-Type": "application/json" }, body: JSON.stringify(eventBody(1)) }];
    return { server, requests };
  }
  const env: Record<string, string> = { SWITCHYARD_EVALUATION_CACHE_MS: String(options.cacheMs), ...options.env };
  const nodeArgs = [...options.nodeArgs, ...(options.profileDir === undefined ? [] : profilingNodeArgs(options.profileDir))];
  const server = await startService({ dataDir, workers: options.workers, native: true, env, nodeArgs, ...(options.cli === undefined ? {} : { cli: options.cli }) });
  const features = scenario === "mixed" || scenario === "evaluate-50-key" ? 50 : Number(/-(\d+)$/.exec(scenario)?.[1] ?? 10);
  const app = await seedApp(server.url, "probe", featureDefinitions(features));
  if (options.contexts === "distinct") for (const body of trafficEntitiesBodies()) await postBulk(server.url, app.publishableKey, body);
  else await postBulk(server.url, app.publishableKey, bulkContextEntitiesBody());
  // The seeded users and companies are projected before any load (remote context reads them).
  await waitCaughtUp(server.url);
  return { server, requests: serviceRequests(scenario, app, options.contexts) };
}

function serviceRequests(scenario: Scenario, app: SeededApp, contexts: ContextTraffic): RequestSpec[] {
  switch (scenario) {
    case "health":
      return [{ method: "GET", path: "/health", headers: {} }];
    case "event":
      return eventRequests(app);
    case "bulk":
      return bulkRequests(app);
    case "bulk-mixed":
      return bulkMixedRequests(app);
    case "mixed":
      return mixedRequests(app);
    case "evaluate-50-key":
      return evaluateKeyRequests(app);
    case "ofrep-bulk-10":
    case "ofrep-bulk-50":
      return ofrepBulkRequests(app);
    case "ofrep-flag-50":
      return ofrepFlagRequests(app);
    default:
      return evaluateRequests(app, { onlyEnabled: scenario === "enabled-50", traffic: contexts });
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      workers: { type: "string", default: "1" },
      "cache-ms": { type: "string", default: "1000" },
      contexts: { type: "string", default: "distinct" },
      seconds: { type: "string", default: "5" },
      repeats: { type: "string", default: "1" },
      rate: { type: "string" },
      connections: { type: "string" },
      driver: { type: "string" },
      profile: { type: "string" },
      "body-bytes": { type: "string" },
      "node-arg": { type: "string", multiple: true, default: [] },
      "accept-encoding": { type: "string" },
      stages: { type: "boolean" },
      ledger: { type: "boolean" },
      env: { type: "string", multiple: true, default: [] },
      "service-build": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const scenario = positionals[0] as Scenario;
  if (!SCENARIOS.includes(scenario)) {
    process.stderr.write(`${positionals[0] === undefined ? "No scenario given." : `Unknown scenario ${positionals[0]}.`}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (values.contexts !== "distinct" && values.contexts !== "repeated") throw new Error("--contexts must be distinct or repeated");
  const options: ProbeOptions = {
    nodeArgs: values["node-arg"],
    bodyBytes: values["body-bytes"] === undefined ? undefined : Number(values["body-bytes"]),
    workers: Number(values.workers),
    cacheMs: Number(values["cache-ms"]),
    contexts: values.contexts,
    profileDir: values.profile,
    env: Object.fromEntries(values.env.map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)])),
    cli: values["service-build"] === undefined ? undefined : resolve(values["service-build"], "dist/src/cli/main.js"),
  };
  const driver = (values.driver ?? detectDriver()) as Driver;
  const scratch = tempDir("switchyard-probe-");
  const data = tempDir("switchyard-probe-data-");
  if (values.stages) {
    if (!scenario.startsWith("evaluate-")) throw new Error("--stages is for the evaluate-N scenarios");
    options.profileDir ??= scratch.path;
  }
  const served = await serverFor(scenario, options, data.path);
  const { server } = served;
  const acceptEncoding = values["accept-encoding"];
  const requests = acceptEncoding === undefined ? served.requests : served.requests.map((request) => ({ ...request, headers: { ...request.headers, "Accept-Encoding": acceptEncoding } }));
  const lines: string[] = [];
  if (values.stages) {
    try {
      const figure = await measureStages(
        server,
        options.profileDir!,
        { driver, requests, connections: values.connections !== undefined ? Number(values.connections) : 50, seconds: Number(values.seconds), scratchDir: scratch.path },
        { title: scenario, features: Number(scenario.slice("evaluate-".length)), workers: options.workers },
      );
      lines.push(`${scenario} (workers ${options.workers}, profiled): ${Math.round(figure.rps).toLocaleString("en")} requests/s, ${figure.totalUs.toFixed(1)} µs of CPU per request`);
      for (const stage of STAGES) lines.push(`  ${stage.padEnd(36)} ${figure.stages[stage].toFixed(1).padStart(7)} µs`);
    } finally {
      data.remove();
      scratch.remove();
    }
    process.stdout.write(`${lines.join("\n")}\n`);
    return;
  }
  const runOptions: ProbeRun = {
    driver,
    scratchDir: scratch.path,
    seconds: Number(values.seconds),
    repeats: Number(values.repeats),
    connections: values.connections !== undefined ? Number(values.connections) : undefined,
    rate: values.rate !== undefined ? Number(values.rate) : undefined,
    label: `workers ${values.workers}, answer cache ${values["cache-ms"]} ms, ${options.contexts} contexts`,
  };
  try {
    const service = await probeRuns(scenario, server, requests, runOptions, lines);
    if (values.ledger) {
      const bare = bareCounterpart(scenario);
      if (bare === undefined) throw new Error(`--ledger: ${scenario} has no bare counterpart (evaluate-N, enabled-50, event, bulk-mixed have)`);
      await server.stop();
      const bareData = tempDir("switchyard-probe-bare-");
      try {
        const bareServed = await serverFor(bare.scenario, { ...options, bodyBytes: bare.bodyBytes }, bareData.path);
        try {
          const baseline = await probeRuns(bare.scenario, bareServed.server, bareServed.requests, { ...runOptions, label: bare.label }, lines);
          lines.push(...ledgerLines(scenario, service, baseline));
        } finally {
          await bareServed.server.stop();
        }
      } finally {
        bareData.remove();
      }
    }
  } finally {
    await server.stop();
    data.remove();
    scratch.remove();
  }
  // Written once the server is gone, so that a reader closing the pipe early (`| head`) cannot leave it running.
  process.stdout.on("error", () => {});
  process.stdout.write(`${lines.join("\n")}\n`);
}

await main();
