/**
 * Starts `node <args>` and waits for the JSON stdout line `{"message":"listening","port":N}` that the service logs
 * (and the benchmark's hello-world servers imitate). Shared by the tests, the benchmarks and the crash and soak tools.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

export interface SpawnListeningOptions {
  env: Record<string, string>;
  /** How long the child may take to announce its port. */
  timeoutMs: number;
  /** Sees every line the child prints on stdout, from the first. */
  onLine?: (line: string) => void;
  /** After SIGTERM, SIGKILL follows after this long; undefined waits for the exit however long it takes. */
  killAfterMs?: number;
}

export interface Listening {
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** Milliseconds from spawn to the "listening" line. */
  startupMs: number;
  /** Resolves with the exit code once the child has exited. */
  exited: Promise<number | null>;
  /** SIGTERM (unless it has exited already), then waits for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (unless it has exited already), then waits for the exit. */
  kill(): Promise<void>;
}

export async function spawnListening(args: readonly string[], options: SpawnListeningOptions): Promise<Listening> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, ...options.env }, stdio: ["ignore", "pipe", "pipe"] });
  const stderr: string[] = [];
  // The first lines, for the error when the child never listens.
  const firstLines: string[] = [];
  child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<number | null>((resolveExit) => child.once("exit", (code) => resolveExit(code)));
  const running = () => child.exitCode === null && child.signalCode === null;
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${args.join(" ")} did not listen within ${options.timeoutMs} ms: ${firstLines.join("\n")} ${stderr.join("")}`)),
      options.timeoutMs,
    );
    // Reading every line also keeps the pipe drained, so a chatty child never blocks on it.
    createInterface({ input: child.stdout! }).on("line", (line) => {
      options.onLine?.(line);
      if (firstLines.length < 50) firstLines.push(line);
      if (!line.includes('"message":"listening"')) return;
      clearTimeout(timer);
      resolvePort((JSON.parse(line) as { port: number }).port);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(" ")} exited with ${code} before listening: ${stderr.join("")} ${firstLines.join("\n")}`));
    });
  });
  return {
    child,
    pid: child.pid!,
    port,
    url: `http://127.0.0.1:${port}`,
    startupMs: performance.now() - started,
    exited,
    async stop() {
      if (running()) child.kill("SIGTERM");
      const timer = options.killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), options.killAfterMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (running()) child.kill("SIGKILL");
      await exited;
    },
  };
}
