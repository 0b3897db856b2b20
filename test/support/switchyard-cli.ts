/** Runs our own CLI (`switchyard …`) as a child process against a test server, as an operator would. */
import { runNode, type CliRun } from "./run-node.js";
import { CLI, type TestServer } from "./server.js";

export type { CliRun };

/** `switchyard <args> --url <server>` with the server's admin token in the environment. */
export function switchyardCli(server: TestServer, args: string[]): Promise<CliRun> {
  return runNode([CLI, ...args, "--url", server.url], { env: { PATH: process.env.PATH ?? "", SWITCHYARD_ADMIN_TOKEN: server.adminToken } });
}
