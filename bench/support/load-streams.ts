/**
 * Concurrent open-loop load streams for the soak: each stream is its own autocannon instance in its own process with
 * its own offered rate, so every kind of request gets its own latency figures (one mixed histogram hid evaluations
 * behind commits).
 */
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import type { StreamSpec } from "./stream-spec.js";

/** The part of autocannon's API used here (it ships no types). */
export interface LoadRequest {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Called before each send; answers the request to send (fresh contexts and ids go in here). */
  setupRequest?: (request: LoadRequest) => LoadRequest;
}
interface Histogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
}
interface AutocannonResult {
  requests: Histogram;
  latency: Histogram;
  errors: number;
  timeouts: number;
  non2xx: number;
  "2xx": number;
  /** Seconds. */
  duration: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (options: Record<string, unknown>, done: (error: Error | null, result: AutocannonResult) => void) => unknown;
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

export interface Stream {
  name: string;
  requests: LoadRequest[];
  connections: number;
}

export interface StreamFigures {
  /** Served requests per second. */
  rps: number;
  /** Requests answered 2xx per second: what a tracking stream got logged (a refusal is answered fast, and is not). */
  acknowledgedRps?: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  /** 503 answers, also among `errors`: retryable refusals (tracking while the projection is behind, or a full queue). */
  refused?: number;
  /** Runs in a process of their own: the 99th percentile of that process's event-loop delay (ms). */
  generatorLoopDelayP99Ms?: number;
}

/** Runs `stream` for `seconds`, closed loop when `rate` is undefined, else offering `rate` requests per second. */
export function runStream(url: string, stream: Stream, seconds: number, rate?: number): Promise<StreamFigures> {
  return new Promise((resolveRun, reject) => {
    autocannon(
      { url, connections: stream.connections, duration: seconds, requests: stream.requests, timeout: 10, ...(rate !== undefined ? { overallRate: rate } : {}) },
      (error, result) =>
        error
          ? reject(error)
          : resolveRun({
              rps: result.requests.average,
              acknowledgedRps: result.duration > 0 ? result["2xx"] / result.duration : Number.NaN,
              p50: result.latency.p50,
              p99: result.latency.p99,
              max: result.latency.max,
              errors: result.errors + result.timeouts + result.non2xx,
              refused: result.statusCodeStats?.["503"]?.count ?? 0,
            }),
    );
  });
}

/** Runs the stream `spec` names in a child process of its own (see stream-process.ts), closed loop without `rate`. */
export function runStreamProcess(url: string, spec: StreamSpec, seconds: number, rate?: number): Promise<StreamFigures> {
  const script = resolve(import.meta.dirname, "stream-process.js");
  return new Promise((resolveRun, reject) => {
    execFile(process.execPath, [script, JSON.stringify({ url, spec, seconds, rate })], { timeout: (seconds + 60) * 1000 }, (error, stdout) =>
      error ? reject(error) : resolveRun(JSON.parse(stdout) as StreamFigures),
    );
  });
}

/** Runs every stream at once for `seconds`, each in its own process at its own rate; answers figures by kind. */
export async function runStreams(url: string, streams: readonly { spec: StreamSpec; rate: number }[], seconds: number): Promise<Record<string, StreamFigures>> {
  const results = await Promise.all(streams.map(({ spec, rate }) => runStreamProcess(url, spec, seconds, rate)));
  return Object.fromEntries(streams.map(({ spec }, index) => [spec.kind, results[index]!]));
}

/** A GET stream cycling through `paths` (distinct contexts: each connection takes the next one). */
export function getStream(name: string, paths: readonly string[], headers: Record<string, string>, connections: number): Stream {
  let next = 0;
  return {
    name,
    connections,
    requests: [{ method: "GET", path: paths[0]!, headers, setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length]! }) }],
  };
}

/** A POST stream whose body `body(sequence)` is built fresh for every request. */
export function postStream(name: string, path: string, headers: Record<string, string>, body: (sequence: number) => string, connections: number): Stream {
  let sequence = 0;
  return {
    name,
    connections,
    requests: [{ method: "POST", path, headers: { ...headers, "content-type": "application/json" }, setupRequest: (request) => ({ ...request, body: body(sequence++) }) }],
  };
}
