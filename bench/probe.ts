/**
 * `node dist/bench/probe.js <scenario> [--workers N] [--cache-ms N] [--seconds N] [--driver wrk|autocannon]`: one
 * load scenario against a freshly seeded service (started and seeded as the benchmark runner does), reporting the
 * rate and the CPU each thread of the server spent per request, read from /proc/<pid>/task/<tid>/stat.
 *
 * For finding where time goes: V8's CPU profiler books uWebSockets.js's native work as "(idle)", and a thread that
 * is busy only part of the time says the load is bound by latency, not by that thread. Linux only (/proc).
 * Scenarios: evaluate-10, evaluate-50, enabled-50, event, bulk (1,000 events per body), hello-get, hello-post,
 * group-commit (bench/baselines/group-commit-server.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { bulkContextEntitiesBody, eventBody, featureDefinitions } from "./support/fixtures.js";
import { detectDriver, runLoad, type Driver, type LoadSpec, type RequestSpec } from "./support/load.js";
import { startGroupCommitServer, startHelloServer, startService, tempDir, type Listening } from "./support/processes.js";
import { postBulk, seedApp } from "./support/seed.js";
import { BULK_SIZE, bulkRequests, evaluateRequests, eventRequests } from "./serving/requests.js";

const SCENARIOS = ["evaluate-10", "evaluate-50", "enabled-50", "event", "bulk", "hello-get", "hello-post", "group-commit"] as const;
type Scenario = (typeof SCENARIOS)[number];

/** Clock ticks of CPU (user + system) per thread, by thread id. */
function threadTicks(pid: number): Map<string, { name: string; ticks: number }> {
  const threads = new Map<string, { name: string; ticks: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      // Fields after the parenthesised command: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1]!.split(" ");
      threads.set(tid, { name: tid === String(pid) ? `${name} (main)` : name, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The thread ended between listing and reading.
    }
  }
  return threads;
}

async function serverFor(scenario: Scenario, workers: number, cacheMs: number, dataDir: string): Promise<{ server: Listening; requests: RequestSpec[] }> {
  if (scenario === "group-commit") {
    const server = await startGroupCommitServer(dataDir);
    return { server, requests: [{ method: "POST", path: "/event", headers: { "Content-Type": "application/json" }, body: JSON.stringify(eventBody(1)) }] };
  }
  if (scenario === "hello-get" || scenario === "hello-post") {
    const server = await startHelloServer("uws");
    const requests: RequestSpec[] =
      scenario === "hello-get"
        ? [{ method: "GET", path: "/hello", headers: {} }]
        : [{ method: "POST", path: "/event", headers: { "Content-Type": "application/json" }, body: JSON.stringify(eventBody(1)) }];
    return { server, requests };
  }
  const server = await startService({ dataDir, workers, native: true, env: { SWITCHYARD_EVALUATION_CACHE_MS: String(cacheMs) } });
  const app = await seedApp(server.url, "probe", featureDefinitions(scenario.endsWith("-50") ? 50 : 10));
  await postBulk(server.url, app.publishableKey, bulkContextEntitiesBody());
  const requests =
    scenario === "event"
      ? eventRequests(app)
      : scenario === "bulk"
        ? bulkRequests(app)
        : evaluateRequests(app, { onlyEnabled: scenario === "enabled-50" });
  return { server, requests };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      workers: { type: "string", default: "1" },
      "cache-ms": { type: "string", default: "1000" },
      seconds: { type: "string", default: "5" },
      driver: { type: "string" },
    },
  });
  const scenario = positionals[0] as Scenario;
  if (!SCENARIOS.includes(scenario)) throw new Error(`usage: probe.js <${SCENARIOS.join("|")}> [--workers N] [--cache-ms N] [--seconds N]`);
  const driver = (values.driver ?? detectDriver()) as Driver;
  const scratch = tempDir("switchyard-probe-");
  const data = tempDir("switchyard-probe-data-");
  const { server, requests } = await serverFor(scenario, Number(values.workers), Number(values["cache-ms"]), data.path);
  const lines: string[] = [];
  try {
    const itemsPerRequest = scenario === "bulk" ? BULK_SIZE : 1;
    const spec: LoadSpec = { baseUrl: server.url, requests, connections: scenario === "bulk" ? 8 : 50, durationSeconds: 2 };
    await runLoad(driver, spec, scratch.path); // warm-up
    const before = threadTicks(server.pid);
    const result = await runLoad(driver, { ...spec, durationSeconds: Number(values.seconds) }, scratch.path);
    const after = threadTicks(server.pid);
    const items = result.requests * itemsPerRequest;
    const unit = itemsPerRequest > 1 ? "event" : "request";
    lines.push(
      `${scenario} (workers ${values.workers}, answer cache ${values["cache-ms"]} ms): ${Math.round(result.rps * itemsPerRequest).toLocaleString("en")} ${unit}s/s, ` +
        `p50 ${result.latencyMs.p50.toFixed(2)} ms, p99 ${result.latencyMs.p99.toFixed(2)} ms, ${result.errors} errors`,
    );
    // Linux counts CPU in ticks of 10 ms (USER_HZ 100).
    const rows = [...after]
      .map(([tid, thread]) => ({ name: thread.name, ms: (thread.ticks - (before.get(tid)?.ticks ?? 0)) * 10 }))
      .filter((row) => row.ms > 0)
      .sort((a, b) => b.ms - a.ms);
    for (const row of rows.slice(0, 8)) {
      const perItem = (row.ms * 1000) / items;
      const busy = (row.ms / (result.durationSeconds * 1000)) * 100;
      lines.push(`  ${row.name.padEnd(22)} ${perItem.toFixed(1).padStart(7)} µs per ${unit}   ${busy.toFixed(0).padStart(3)} % of a core`);
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
