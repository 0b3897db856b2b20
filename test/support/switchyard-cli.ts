/** Runs our own CLI (`switchyard …`) as a child process against a test server, as an operator would. */
import { spawn } from "node:child_process";
import { CLI, type TestServer } from "./server.js";

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `switchyard <args> --url <server>` with the server's admin token in the environment. */
export function switchyardCli(server: TestServer, args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args, "--url", server.url], { env: { PATH: process.env.PATH ?? "", SWITCHYARD_ADMIN_TOKEN: server.adminToken } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
