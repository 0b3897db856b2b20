/**
 * The load generator: wrk (`-t1 -c50 --latency`) driven by a generated Lua script, or autocannon where wrk is
 * missing. Smoke runs use a small in-process prober instead, because wrk and autocannon both take at least a second
 * per run. Load only ever targets 127.0.0.1.
 */
import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { createRequire } from "node:module";
import { join } from "node:path";

/** One HTTP request of a load run; the driver cycles through the list, one entry per request. */
export interface RequestSpec {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LoadSpec {
  /** `http://127.0.0.1:<port>`. */
  baseUrl: string;
  requests: readonly RequestSpec[];
  connections: number;
  /** Whole seconds for wrk; autocannon takes fractions. */
  durationSeconds: number;
  /** Offered requests per second (open-ish loop); undefined sends as fast as answers come back. */
  rate?: number;
  /** autocannon and the prober: stop after this many requests instead of after the duration. */
  amount?: number;
  /**
   * Count 503 answers whose body names PROJECTION_BEHIND (`refused`). Reading bodies costs the generator a little
   * per answer, so only tracking scenarios, whose requests are few and large, ask for it.
   */
  countRefusals?: boolean;
}

/** What a refused tracking call's body names (the service's retryable 503 while its projection is behind). */
export const REFUSAL_CODE = "PROJECTION_BEHIND";

export interface LoadResult {
  driver: Driver;
  requests: number;
  durationSeconds: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** Socket errors, timeouts and answers with a status of 400 or more. */
  errors: number;
  /** Answers with a 2xx status. */
  acknowledged: number;
  /** 503 answers naming PROJECTION_BEHIND (also among `errors`); 0 unless the spec asked to count them. */
  refused: number;
}

export type Driver = "wrk" | "autocannon" | "probe";

/** Where wrk is, or undefined: Debian's package puts it in /usr/bin; elsewhere it may be on the PATH. */
export function findWrk(): string | undefined {
  for (const candidate of ["/usr/bin/wrk", "wrk"]) {
    // wrk has no version flag that exits 0; a binary that ran at all has no spawn error.
    if (spawnSync(candidate, ["--version"], { stdio: "ignore" }).error === undefined) return candidate;
  }
  return undefined;
}

/** wrk when it runs here, else autocannon. */
export function detectDriver(): Driver {
  return findWrk() !== undefined ? "wrk" : "autocannon";
}

export function runLoad(driver: Driver, spec: LoadSpec, scratchDir: string): Promise<LoadResult> {
  if (driver === "wrk") return runWrk(spec, scratchDir);
  return driver === "autocannon" ? runAutocannon(spec) : runProbe(spec);
}

// ---------------------------------------------------------------------------------------------------------------
// wrk

/** A Lua long string whose level cannot clash with the text. */
function luaString(text: string): string {
  let level = 1;
  while (text.includes(`]${"=".repeat(level)}]`)) level++;
  const equals = "=".repeat(level);
  // A newline right after the opening bracket is dropped by Lua; bodies never start with one that matters.
  return `[${equals}[${text}]${equals}]`;
}

function luaTable(headers: Record<string, string>): string {
  return `{${Object.entries(headers)
    // The spaces matter: "[[" would open a long string.
    .map(([name, value]) => `[ ${luaString(name)} ]=${luaString(value)}`)
    .join(",")}}`;
}

/**
 * The script: requests are formatted once in `init` and cycled; `delay` paces them when a rate is given; `done`
 * prints one machine-readable line with exact percentiles (the text report rounds them).
 */
export function wrkScript(spec: LoadSpec): string {
  // LuaJIT caps the constants of one function, so a long list is built by one small function per chunk.
  const chunks: string[] = [];
  for (let start = 0; start < spec.requests.length; start += WRK_CHUNK) {
    const entries = spec.requests
      .slice(start, start + WRK_CHUNK)
      .map((request) => `add({${luaString(request.method)},${luaString(request.path)},${luaTable(request.headers)},${request.body === undefined ? "nil" : luaString(request.body)}})`)
      .join("\n");
    chunks.push(`;(function()\n${entries}\nend)()`);
  }
  const pacing =
    spec.rate === undefined
      ? ""
      : `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clock, bench_timespec *ts);
]]
local clock = ffi.new("bench_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, clock)
  return tonumber(clock.tv_sec) * 1000 + tonumber(clock.tv_nsec) / 1e6
end
local interval = 1000 / ${spec.rate}
local next_at = nil
-- One schedule for the thread: request n goes out at start + n * interval. Behind by more than 50 ms (a stall),
-- the schedule restarts from now instead of bursting to catch up.
delay = function()
  local now = now_ms()
  if next_at == nil or next_at < now - 50 then next_at = now end
  local at = next_at
  next_at = next_at + interval
  return math.max(0, math.floor(at - now))
end
`;
  // A thread's globals are read in done() through the thread objects setup() kept (wrk's own pattern).
  const refusals = spec.countRefusals
    ? `
response = function(status, headers, body)
  if status == 503 and body ~= nil and string.find(body, "${REFUSAL_CODE}", 1, true) then refused = refused + 1 end
end
`
    : "";
  return `-- generated by bench/support/load.ts
local specs = {}
local threads = {}
refused = 0
setup = function(thread) threads[#threads + 1] = thread end
local function add(s) specs[#specs + 1] = s end
${chunks.join("\n")}
local formatted = {}
local count = 0
init = function(args)
  for i, s in ipairs(specs) do
    formatted[i] = wrk.format(s[1], s[2], s[3], s[4])
  end
end
request = function()
  count = count + 1
  return formatted[(count % #formatted) + 1]
end
${pacing}${refusals}
done = function(summary, latency, requests)
  local e = summary.errors
  local refused_total = 0
  for _, thread in ipairs(threads) do refused_total = refused_total + (thread:get("refused") or 0) end
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"errors":%d,"status_errors":%d,"refused":%d,"p50":%f,"p90":%f,"p99":%f,"max":%f,"mean":%f}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status, refused_total,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
`;
}

/** Requests per generated Lua function. */
const WRK_CHUNK = 500;

let scriptCounter = 0;

async function runWrk(spec: LoadSpec, scratchDir: string): Promise<LoadResult> {
  const script = join(scratchDir, `load-${process.pid}-${++scriptCounter}.lua`);
  writeFileSync(script, wrkScript(spec));
  const seconds = Math.max(1, Math.round(spec.durationSeconds));
  const args = ["-t1", `-c${spec.connections}`, `-d${seconds}s`, "--latency", "--timeout", "10s", "-s", script, spec.baseUrl];
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(findWrk() ?? "wrk", args, { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), (seconds + 30) * 1000);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      // wrk runs on with its default request when the script does not load; the missing result line gives it away.
      if (code === 0 && stdout.includes("BENCH_JSON ")) resolve(stdout);
      else reject(new Error(`wrk exited with ${code} without a result: ${stderr}${stdout}`));
    });
  });
  return parseWrkOutput(output);
}

/** Reads a wrk run: the script's BENCH_JSON line when present, else wrk's own text report. */
export function parseWrkOutput(output: string): LoadResult {
  const line = /^BENCH_JSON (\{.*\})$/m.exec(output);
  if (line) {
    const data = JSON.parse(line[1]!) as Record<string, number>;
    const durationSeconds = data.duration_us! / 1e6;
    return {
      driver: "wrk",
      requests: data.requests!,
      durationSeconds,
      rps: data.requests! / durationSeconds,
      latencyMs: { p50: data.p50! / 1000, p90: data.p90! / 1000, p99: data.p99! / 1000, max: data.max! / 1000, mean: data.mean! / 1000 },
      errors: data.errors! + data.status_errors!,
      // wrk's status errors are the answers of 400 or more; it follows no redirects and the service sends none.
      acknowledged: data.requests! - data.status_errors!,
      refused: data.refused ?? 0,
    };
  }
  return parseWrkText(output);
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function durationMs(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text ?? "");
  if (!match) return Number.NaN;
  return Number(match[1]) * UNIT_MS[match[2]!]!;
}

/** wrk's human-readable report (`--latency`): Requests/sec, the latency distribution, errors. */
export function parseWrkText(output: string): LoadResult {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1]);
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m)/.exec(output);
  const percentile = (p: string) => durationMs(new RegExp(`^\\s+${p}%\\s+(\\S+)`, "m").exec(output)?.[1]);
  const latencyRow = /^\s+Latency\s+(\S+)\s+(\S+)\s+(\S+)/m.exec(output);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  if (!Number.isFinite(rps) || !total) throw new Error(`cannot read wrk output:\n${output}`);
  const socketErrors = socket ? socket.slice(1).reduce((sum, value) => sum + Number(value), 0) : 0;
  return {
    driver: "wrk",
    requests: Number(total[1]),
    durationSeconds: (Number(total[2]) * UNIT_MS[total[3]!]!) / 1000,
    rps,
    latencyMs: {
      p50: percentile("50"),
      p90: percentile("90"),
      p99: percentile("99"),
      max: durationMs(latencyRow?.[3]),
      mean: durationMs(latencyRow?.[1]),
    },
    errors: socketErrors + non2xx,
    acknowledged: Number(total[1]) - non2xx,
    refused: 0,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// autocannon

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  "2xx": number;
  "4xx": number;
  "5xx": number;
  latency: { p50: number; p90: number; p99: number; max: number; average: number; totalCount: number };
}

type Autocannon = (options: Record<string, unknown>, callback: (error: Error | null, result: AutocannonResult) => void) => unknown;

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;
  let next = 0;
  let refused = 0;
  const options: Record<string, unknown> = {
    url: spec.baseUrl,
    connections: spec.amount !== undefined ? Math.min(spec.connections, spec.amount) : spec.connections,
    requests: [
      {
        setupRequest: (request: Record<string, unknown>) => {
          const chosen = spec.requests[next++ % spec.requests.length]!;
          return { ...request, method: chosen.method, path: chosen.path, headers: chosen.headers, body: chosen.body };
        },
        ...(spec.countRefusals
          ? {
              onResponse: (status: number, body: string | undefined) => {
                if (status === 503 && body?.includes(REFUSAL_CODE)) refused++;
              },
            }
          : {}),
      },
    ],
    timeout: 10,
  };
  if (spec.amount !== undefined) options.amount = spec.amount;
  else options.duration = spec.durationSeconds;
  if (spec.rate !== undefined) options.overallRate = Math.max(1, Math.round(spec.rate));
  const result = await new Promise<AutocannonResult>((resolve, reject) => {
    autocannon(options, (error, value) => (error ? reject(error) : resolve(value)));
  });
  const requests = result.latency.totalCount;
  return {
    driver: "autocannon",
    requests,
    durationSeconds: result.duration,
    rps: requests / result.duration,
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max, mean: result.latency.average },
    errors: result.errors + result.timeouts + result["4xx"] + result["5xx"],
    acknowledged: result["2xx"],
    refused,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The prober: a few requests over keep-alive connections from this process, for smoke runs.

function percentileOf(sorted: readonly number[], share: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]!;
}

async function runProbe(spec: LoadSpec): Promise<LoadResult> {
  const target = new URL(spec.baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: spec.connections });
  const latencies: number[] = [];
  let errors = 0;
  let acknowledged = 0;
  let refused = 0;
  let next = 0;
  const deadline = performance.now() + spec.durationSeconds * 1000;
  const limit = spec.amount ?? Number.POSITIVE_INFINITY;
  const interval = spec.rate !== undefined ? 1000 / spec.rate : 0;
  const started = performance.now();
  const one = (chosen: RequestSpec) =>
    new Promise<void>((resolve) => {
      const sent = performance.now();
      const outgoing = httpRequest(
        { agent, host: target.hostname, port: target.port, method: chosen.method, path: chosen.path, headers: chosen.headers },
        (response) => {
          const status = response.statusCode ?? 500;
          // Only a refusal's body is read: it tells PROJECTION_BEHIND from other 503s.
          let body = "";
          if (status === 503 && spec.countRefusals) response.on("data", (chunk: Buffer) => (body += chunk.toString()));
          else response.resume();
          response.on("end", () => {
            latencies.push(performance.now() - sent);
            if (status >= 400) errors++;
            if (status >= 200 && status < 300) acknowledged++;
            if (body.includes(REFUSAL_CODE)) refused++;
            resolve();
          });
        },
      );
      outgoing.on("error", () => {
        errors++;
        resolve();
      });
      outgoing.end(chosen.body);
    });
  const lane = async () => {
    while (next < limit && performance.now() < deadline) {
      const index = next++;
      if (interval > 0) {
        const wait = started + index * interval - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      await one(spec.requests[index % spec.requests.length]!);
    }
  };
  await Promise.all(Array.from({ length: spec.connections }, lane));
  agent.destroy();
  const durationSeconds = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    driver: "probe",
    requests: latencies.length,
    durationSeconds,
    rps: latencies.length / durationSeconds,
    latencyMs: {
      p50: percentileOf(sorted, 0.5),
      p90: percentileOf(sorted, 0.9),
      p99: percentileOf(sorted, 0.99),
      max: sorted[sorted.length - 1] ?? Number.NaN,
      mean: sorted.reduce((sum, value) => sum + value, 0) / Math.max(1, sorted.length),
    },
    errors,
    acknowledged,
    refused,
  };
}
