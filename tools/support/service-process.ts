/** The built service as a child process on an ephemeral port, for the crash and soak tools. */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

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

export interface Running {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
}

/** Starts `serve` over `options.dataDir`; resolves once it listens. */
export async function start(options: ServiceProcessOptions): Promise<Running> {
  const child = spawn(process.execPath, [options.cli, "serve"], {
    env: {
      ...process.env,
      NODE_ENV: "production",
      SWITCHYARD_PORT: "0",
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_DATA_DIR: options.dataDir,
      SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN,
      SWITCHYARD_NATIVE: options.native,
      SWITCHYARD_LOG: "info",
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("server did not start in 20 s")), 20_000);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      options.onLine?.(line);
      if (line.includes('"message":"listening"')) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    void exited.then(() => reject(new Error("server exited before listening")));
  });
  return { child, url: `http://127.0.0.1:${port}`, exited };
}

/**
 * One crash cycle: runs `concurrency` load loops (each told whether the service was killed yet), kills the service
 * with SIGKILL at a random moment within `killAfterMs`, lets the loops notice, and restarts it on the same data dir.
 */
export async function killUnderLoad(
  server: Running,
  killAfterMs: readonly [number, number],
  concurrency: number,
  loop: (workerIndex: number, killed: () => boolean) => Promise<void>,
  restart: () => Promise<Running>,
): Promise<Running> {
  let killed = false;
  const workers = Array.from({ length: concurrency }, (_, index) => loop(index, () => killed));
  const [minKill, maxKill] = killAfterMs;
  await new Promise((resolve) => setTimeout(resolve, minKill + Math.random() * (maxKill - minKill)));
  server.child.kill("SIGKILL");
  killed = true;
  await server.exited;
  await Promise.all(workers);
  return restart();
}
