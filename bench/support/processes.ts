/** Child processes the load benchmarks start: the real service and the hello-world baselines. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

/** The built CLI: benchmarks drive the service exactly as it is deployed. */
export const CLI = resolve(import.meta.dirname, "../../src/cli/main.js");
export const BENCH_ADMIN_TOKEN = "adm_bench_token_0123456789abcdefghijklmnopqrstuvwxyz";

/** A started process that announced its port on stdout. */
export interface Listening {
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** Milliseconds from spawn to the "listening" line. */
  startupMs: number;
  /** SIGTERM, then SIGKILL after a grace period; resolves when the process is gone. */
  stop(): Promise<void>;
}

/** Resident memory of a process in bytes (VmRSS of /proc/<pid>/status); undefined where /proc is missing. */
export function residentBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Spawns `node <args>` and waits for a JSON stdout line with `"message":"listening"` and a `port` (the shape the
 * service logs and the hello-world servers imitate).
 */
export async function spawnListening(args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Listening> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const stderr: string[] = [];
  const stdout: string[] = [];
  child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<void>((resolveExit) => child.once("exit", () => resolveExit()));
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(" ")} did not listen within ${timeoutMs} ms: ${stderr.join("")}`)), timeoutMs);
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      if (stdout.length < 50) stdout.push(line);
      if (!line.includes('"message":"listening"')) return;
      clearTimeout(timer);
      resolvePort((JSON.parse(line) as { port: number }).port);
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${args.join(" ")} exited before listening: ${stderr.join("")} ${stdout.join("\n")}`));
    });
  });
  const startupMs = performance.now() - started;
  // Keep draining stdout so a chatty child never blocks on a full pipe.
  child.stdout!.resume();
  return {
    child,
    pid: child.pid!,
    port,
    url: `http://127.0.0.1:${port}`,
    startupMs,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface ServiceOptions {
  dataDir: string;
  /** SWITCHYARD_WORKERS: 0 runs jobs inline on the main thread. */
  workers: number;
  /** false starts the native-free twin (node:http + log store). */
  native: boolean;
  /** Further SWITCHYARD_* settings. */
  env?: Record<string, string>;
}

export interface RunningService extends Listening {
  options: ServiceOptions;
}

/** Starts `node dist/src/cli/main.js serve` on 127.0.0.1 with an ephemeral port. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const listening = await spawnListening([CLI, "serve"], {
    NODE_ENV: "production",
    SWITCHYARD_PORT: "0",
    SWITCHYARD_HOST: "127.0.0.1",
    SWITCHYARD_DATA_DIR: options.dataDir,
    SWITCHYARD_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    SWITCHYARD_NATIVE: options.native ? "1" : "0",
    SWITCHYARD_WORKERS: String(options.workers),
    SWITCHYARD_LOG: "info",
    ...options.env,
  });
  return { ...listening, options };
}

/** The bare uWebSockets.js or node:http hello-world server (bench/baselines/hello-server.js). */
export function startHelloServer(kind: "uws" | "node"): Promise<Listening> {
  return spawnListening([resolve(import.meta.dirname, "../baselines/hello-server.js"), kind], {});
}

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
