/** Child processes the load benchmarks start: the real service and the hello-world baselines. */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawnListening as spawnChild, type Listening } from "./spawn-listening.js";
import type { GroupCommitMode } from "../baselines/group-commit-server.js";

export type { Listening };

/** The built CLI: benchmarks drive the service exactly as it is deployed. */
export const CLI = resolve(import.meta.dirname, "../../src/cli/main.js");
export const BENCH_ADMIN_TOKEN = "adm_bench_token_0123456789abcdefghijklmnopqrstuvwxyz";

/** Resident memory of a process in bytes (VmRSS of /proc/<pid>/status); undefined where /proc is missing. */
export function residentBytes(pid: number): number | undefined {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A benchmark gives a child 30 s to start, and 15 s to stop before it is killed. */
function spawnListening(args: string[], env: Record<string, string>): Promise<Listening> {
  return spawnChild(args, { env, timeoutMs: 30_000, killAfterMs: 15_000 });
}

export interface ServiceOptions {
  dataDir: string;
  /** SWITCHYARD_WORKERS: 0 runs jobs inline on the main thread. */
  workers: number;
  /** false starts the native-free twin (node:http + log store). */
  native: boolean;
  /** Further SWITCHYARD_* settings. */
  env?: Record<string, string>;
  /** Options for node itself, before the script (e.g. --cpu-prof). */
  nodeArgs?: readonly string[];
  /** Another build's CLI to run instead of this one's (before/after comparisons under one harness). */
  cli?: string;
}

export interface RunningService extends Listening {
  options: ServiceOptions;
}

/** Starts `node dist/src/cli/main.js serve` on 127.0.0.1 with an ephemeral port. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const listening = await spawnListening([...(options.nodeArgs ?? []), options.cli ?? CLI, "serve"], {
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

/**
 * The bare uWebSockets.js server that commits each body before answering (bench/baselines/group-commit-server.js);
 * `perItem` stores each item of an array body on its own (the /bulk ceiling).
 */
export function startGroupCommitServer(dataDir: string, mode: GroupCommitMode = "body"): Promise<Listening> {
  return spawnListening([resolve(import.meta.dirname, "../baselines/group-commit-server.js"), dataDir, ...(mode === "body" ? [] : [`--${mode}`])], {});
}

/**
 * The bare uWebSockets.js or node:http hello-world server (bench/baselines/hello-server.js); with `getBodyBytes`, a
 * uWebSockets.js one whose GET answers are that large.
 */
export function startHelloServer(kind: "uws" | "uws-deferred" | "node", getBodyBytes?: number): Promise<Listening> {
  const args = [resolve(import.meta.dirname, "../baselines/hello-server.js"), kind, ...(getBodyBytes === undefined ? [] : [String(getBodyBytes)])];
  return spawnListening(args, {});
}

/** A fresh temporary directory, removed by the returned function. */
export function tempDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
