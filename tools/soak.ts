/**
 * Soak: `node dist/tools/soak.js [--minutes 10] [--window 60] [--load 0.7] [--native 1|0] [--workers N] [--connections 32]`
 *
 * Starts the built service on a fresh data dir, measures its maximum throughput for the mix below (closed loop,
 * `--max-seconds`), then offers `--load` × that rate for `--minutes`, in windows of `--window` seconds. The mix:
 * 80 % evaluation (`GET /features/evaluated` with varied contexts over 20 features with rules), 20 % tracking
 * (`/event`, `/user`, `/company`, a small `/bulk`). Per window: throughput, p50/p99/max latency, errors, and the
 * server's resident memory (VmRSS, split into anonymous and file-backed pages: LMDB maps its file, so pages of a
 * growing database count as RSS without being a leak). The first window is warm-up. Reported: RSS growth from the
 * end of warm-up to the end, total and anonymous (target < 10 %), p99 drift (last window's p99 minus the first
 * measured window's) and errors. Exits 1 when anonymous growth ≥ 10 % or any request failed. Load only ever targets
 * 127.0.0.1.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ADMIN_TOKEN, start } from "./support/service-process.js";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    window: { type: "string", default: "60" },
    load: { type: "string", default: "0.7" },
    native: { type: "string", default: "1" },
    workers: { type: "string" },
    connections: { type: "string", default: "32" },
    "max-seconds": { type: "string", default: "15" },
  },
});

/** The part of autocannon's API used here (it ships no types). */
interface LoadRequest {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Called before each send; answers the request to send (unique ids go in here). */
  setupRequest?: (request: LoadRequest) => LoadRequest;
}
interface Histogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
}
interface LoadResult {
  requests: Histogram;
  latency: Histogram;
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: Record<string, unknown>, done: (error: Error | null, result: LoadResult) => void) => unknown;
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

const CLI = resolve(import.meta.dirname, "../src/cli/main.js");

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

async function call(url: string, method: string, path: string, token: string, body?: unknown): Promise<any> {
  const response = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

/** 20 features with rules, some stored users and companies (so remote context is used), keys for the mix. */
async function seed(url: string): Promise<{ publishableKey: string; secretKey: string }> {
  const app = (await call(url, "POST", "/admin/apps", ADMIN_TOKEN, { name: "soak" })).app;
  const environment = app.environments[0] as { id: string; publishableKey: string; secretKey: string };
  for (let index = 0; index < 20; index++) {
    const key = `feature-${index}`;
    await call(url, "PUT", `/admin/apps/${app.id}/features/${key}`, ADMIN_TOKEN, { description: key });
    await call(url, "PUT", `/admin/environments/${environment.id}/features/${key}/targeting`, ADMIN_TOKEN, {
      rules: [
        { filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro", "enterprise"] } },
        { filter: { type: "group", operator: "and", filters: [{ type: "context", field: "user.role", operator: "ANY_OF", values: ["admin"] }, { type: "rolloutPercentage", key, partialRolloutAttribute: "user.id", partialRolloutThreshold: 50_000 }] } },
      ],
    });
  }
  for (let index = 0; index < 100; index++) {
    await call(url, "POST", "/company", environment.secretKey, { companyId: `co${index}`, userId: `u${index}`, attributes: { plan: index % 3 === 0 ? "pro" : "free" } });
  }
  return environment;
}

/** The request cycle each connection loops over: 8 evaluations, 2 tracking calls (80/20). */
function mix(keys: { publishableKey: string; secretKey: string }): LoadRequest[] {
  const evaluate = (index: number): LoadRequest => ({
    method: "GET",
    path: `/features/evaluated?context.user.id=u${index * 7}&context.user.role=${index % 2 ? "admin" : "member"}&context.company.id=co${index * 11}`,
    headers: { authorization: `Bearer ${keys.publishableKey}` },
  });
  let sequence = 0;
  // A fresh id per request: new users and companies keep arriving, as in production.
  const post = (path: string, body: (id: number) => string): LoadRequest => ({
    method: "POST",
    path,
    headers: { authorization: `Bearer ${keys.secretKey}`, "content-type": "application/json" },
    setupRequest: (request) => ({ ...request, body: body(sequence++) }),
  });
  return [
    evaluate(1),
    evaluate(2),
    evaluate(3),
    evaluate(4),
    post("/event", (id) => `{"event":"soak","userId":"u${id % 5000}","companyId":"co${id % 100}","attributes":{"n":${id}}}`),
    evaluate(5),
    evaluate(6),
    evaluate(7),
    evaluate(8),
    post(
      "/bulk",
      (id) =>
        `[{"type":"user","userId":"n${id}","attributes":{"plan":"pro"}},{"type":"company","companyId":"c${id}","userId":"n${id}"},{"type":"event","event":"soak-bulk","userId":"n${id}"}]`,
    ),
  ];
}

interface Window {
  index: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  memory: Memory;
  maxRssMbDuring: number;
}

function run(url: string, requests: LoadRequest[], seconds: number, connections: number, rate?: number): Promise<LoadResult> {
  return new Promise((resolveRun, reject) => {
    autocannon(
      { url, connections, duration: seconds, requests, timeout: 10, ...(rate !== undefined ? { overallRate: rate } : {}) },
      (error, result) => (error ? reject(error) : resolveRun(result)),
    );
  });
}

const dataDir = mkdtempSync(join(tmpdir(), "switchyard-soak-"));
const server = await start({
  cli: CLI,
  dataDir,
  native: values.native!,
  env: values.workers !== undefined ? { SWITCHYARD_WORKERS: values.workers } : {},
  onLine: (line) => {
    if (line.includes('"level":"error"')) process.stderr.write(`server: ${line}\n`);
  },
});
const { url, pid } = server;
try {
  const keys = await seed(url);
  const requests = mix(keys);
  const connections = Number(values.connections);
  const maxRun = await run(url, requests, Number(values["max-seconds"]), connections);
  const maxRps = maxRun.requests.average;
  const rate = Math.max(1, Math.round(maxRps * Number(values.load)));
  process.stderr.write(`maximum ${maxRps} req/s (p99 ${maxRun.latency.p99} ms); soaking at ${rate} req/s for ${values.minutes} min\n`);

  const windows: Window[] = [];
  const windowSeconds = Number(values.window);
  const windowCount = Math.max(2, Math.round((Number(values.minutes) * 60) / windowSeconds));
  for (let index = 0; index < windowCount; index++) {
    let maxRss = 0;
    const sampler = setInterval(() => {
      maxRss = Math.max(maxRss, memoryOf(pid).rssMb);
    }, 1_000);
    const result = await run(url, requests, windowSeconds, connections, rate);
    clearInterval(sampler);
    const window: Window = {
      index,
      seconds: windowSeconds,
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      max: result.latency.max,
      errors: result.errors + result.timeouts + result.non2xx,
      memory: memoryOf(pid),
      maxRssMbDuring: maxRss,
    };
    windows.push(window);
    process.stderr.write(`${JSON.stringify(window)}\n`);
  }
  const warm = windows[0]!;
  const firstMeasured = windows[1]!;
  const last = windows[windows.length - 1]!;
  const growth = (from: number, to: number) => Math.round(((to - from) / from) * 1000) / 10;
  const report = {
    date: new Date().toISOString(),
    command: `node dist/tools/soak.js ${process.argv.slice(2).join(" ")}`.trim(),
    native: values.native,
    maxRps,
    maxRunP99: maxRun.latency.p99,
    offeredRps: rate,
    minutes: (windowCount * windowSeconds) / 60,
    requests: windows.reduce((sum, window) => sum + window.rps * window.seconds, 0),
    errors: windows.reduce((sum, window) => sum + window.errors, 0),
    rssAfterWarmUpMb: warm.memory.rssMb,
    rssEndMb: last.memory.rssMb,
    rssGrowthPercent: growth(warm.memory.rssMb, last.memory.rssMb),
    anonAfterWarmUpMb: warm.memory.anonMb,
    anonEndMb: last.memory.anonMb,
    anonGrowthPercent: growth(warm.memory.anonMb, last.memory.anonMb),
    fileBackedEndMb: last.memory.fileMb,
    p99FirstMs: firstMeasured.p99,
    p99LastMs: last.p99,
    p99DriftMs: last.p99 - firstMeasured.p99,
    p99MaxWindowMs: Math.max(...windows.slice(1).map((window) => window.p99)),
    windows,
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  // Judged on anonymous memory (heap, native allocations): file-backed pages are LMDB's map of a database that grows
  // by design during a soak, counted in RSS but reclaimable page cache, not a leak. Both are reported.
  process.exitCode = report.anonGrowthPercent < 10 && report.errors === 0 ? 0 : 1;
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
