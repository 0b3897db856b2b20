import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawnListening } from "../../bench/support/spawn-listening.js";

/** Which twin the end-to-end suites run against: CI runs them once each way (SWITCHYARD_NATIVE=0 for native-free). */
export const NATIVE_MODE = process.env.SWITCHYARD_NATIVE === "0" ? "0" : "1";

export const CLI = resolve(import.meta.dirname, "../../dist/src/cli/main.js");
export const ADMIN_TOKEN = "adm_test_token_0123456789abcdefghijklmnopqrstuvwxyz";

export interface TestServer {
  url: string;
  port: number;
  dataDir: string;
  process: ChildProcess;
  /** Every stdout line so far. */
  output: string[];
  adminToken: string;
  /** SIGTERM and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

export interface StartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  /** Keep the data dir after stop (for restarts). */
  keepData?: boolean;
}

export function makeDataDir(): string {
  return mkdtempSync(join(tmpdir(), "switchyard-test-"));
}

/** Starts the real service (built CLI) on 127.0.0.1 with an ephemeral port and a temp data dir. */
export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? makeDataDir();
  const output: string[] = [];
  const listening = await spawnListening([CLI, "serve"], {
    env: {
      NODE_ENV: "production",
      SWITCHYARD_PORT: "0",
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
      SWITCHYARD_NATIVE: NATIVE_MODE,
      SWITCHYARD_WORKERS: process.env.SWITCHYARD_WORKERS ?? "1",
      ...options.env,
    },
    timeoutMs: 20_000,
    onLine: (line) => output.push(line),
  });
  const cleanup = () => {
    if (!options.keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  return {
    url: listening.url,
    port: listening.port,
    dataDir,
    process: listening.child,
    output,
    adminToken: options.env?.SWITCHYARD_ADMIN_TOKEN ?? ADMIN_TOKEN,
    async stop() {
      const code = await listening.stop();
      cleanup();
      return code;
    },
    kill: () => listening.kill(),
  };
}
