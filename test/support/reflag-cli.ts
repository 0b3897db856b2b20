/** Runs the published Reflag CLI (`@reflag/cli`, unmodified) in a temporary project against a server under test. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runNode, type CliRun } from "./run-node.js";

export const REFLAG_CLI = resolve(import.meta.dirname, "../../node_modules/@reflag/cli/dist/index.js");

export type { CliRun };

/**
 * A project directory with a `package.json` and a `reflag.config.json` naming the app and the service's `/api`, and
 * its own HOME so that the CLI's token file (~/.reflag-auth) never touches the real one.
 */
export function reflagProject(serverUrl: string, appId: string, typesOutput = [{ path: "gen/flags.d.ts", format: "react" }]): string {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-reflag-cli-"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "reflag-cli-project", private: true }));
  writeFileSync(join(dir, "reflag.config.json"), JSON.stringify({ baseUrl: serverUrl, apiUrl: `${serverUrl}/api`, appId, typesOutput }, null, 2));
  return dir;
}

/** `reflag ARGS` in `cwd` with REFLAG_API_KEY set to `apiKey`; NO_COLOR keeps the output plain. */
export function runReflag(cwd: string, apiKey: string | undefined, args: string[]): Promise<CliRun> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", HOME: cwd, NO_COLOR: "1", FORCE_COLOR: "0" };
  if (apiKey !== undefined) env.REFLAG_API_KEY = apiKey;
  return runNode([REFLAG_CLI, ...args], { cwd, env });
}
