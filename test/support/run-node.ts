/** Runs a Node.js script as a child process and collects what it printed: the tests' way of running CLIs and tools. */
import { spawn } from "node:child_process";

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunNodeOptions {
  /** The child's whole environment; without it the child inherits this process's. */
  env?: Record<string, string>;
  cwd?: string;
  /** Written to the child's stdin, which is then closed; without it stdin is ignored. */
  input?: string;
}

/** `node <args>`, resolved once the child exited and its output streams closed. */
export function runNode(args: string[], options: RunNodeOptions = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      ...(options.env !== undefined ? { env: options.env } : {}),
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}
