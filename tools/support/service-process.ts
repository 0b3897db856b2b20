/** The built service as a child process on an ephemeral port, for the crash and soak tools. */
import { spawnListening, type Listening } from "../../bench/support/spawn-listening.js";

export const ADMIN_TOKEN = "adm_tools_token_0123456789abcdefghijklmnopqrstu";

export interface ServiceProcessOptions {
  cli: string;
  dataDir: string;
  /** "1" native, "0" native-free. */
  native: string;
  env?: Record<string, string>;
  /** Sees every line the service prints on stdout. */
  onLine?: (line: string) => void;
}

export type Running = Listening;

/** Starts `serve` over `options.dataDir`; resolves once it listens. */
export function start(options: ServiceProcessOptions): Promise<Running> {
  return spawnListening([options.cli, "serve"], {
    env: {
      NODE_ENV: "production",
      SWITCHYARD_PORT: "0",
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_DATA_DIR: options.dataDir,
      SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
      SWITCHYARD_NATIVE: options.native,
      SWITCHYARD_LOG: "info",
      ...options.env,
    },
    timeoutMs: 20_000,
    ...(options.onLine ? { onLine: options.onLine } : {}),
  });
}

/** How long a kill waits past its random delay for the load to have progressed (see killUnderLoad). */
const PROGRESS_WAIT_MAX_MS = 20_000;

/**
 * One crash cycle: runs `concurrency` load loops (each told whether the service was killed yet), kills the service
 * with SIGKILL at a random moment within `killAfterMs` — and not before `progressed()` says the load did enough this
 * cycle, for at most 20 s more — lets the loops notice, and restarts it on the same data dir.
 */
export async function killUnderLoad(
  server: Running,
  killAfterMs: readonly [number, number],
  concurrency: number,
  loop: (workerIndex: number, killed: () => boolean) => Promise<void>,
  restart: () => Promise<Running>,
  progressed: () => boolean = () => true,
): Promise<Running> {
  let killed = false;
  const workers = Array.from({ length: concurrency }, (_, index) => loop(index, () => killed));
  const [minKill, maxKill] = killAfterMs;
  await new Promise((resolve) => setTimeout(resolve, minKill + Math.random() * (maxKill - minKill)));
  // On a loaded machine (CI runs suites side by side) the delay alone may pass before the load got going.
  const giveUpAt = Date.now() + PROGRESS_WAIT_MAX_MS;
  while (!progressed() && Date.now() < giveUpAt) await new Promise((resolve) => setTimeout(resolve, 10));
  server.child.kill("SIGKILL");
  killed = true;
  await server.exited;
  await Promise.all(workers);
  return restart();
}
