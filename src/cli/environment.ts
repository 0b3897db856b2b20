import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN_FILE } from "../accounts/admin-token.js";

/**
 * What the `switchyard` commands that call a running service read from the environment: the one place besides
 * `loadConfig` (the service's own settings) where the process environment is read.
 */
export interface CliEnvironment {
  /** Where the service listens: `http://127.0.0.1:<SWITCHYARD_PORT or 3000>` unless `--url` says otherwise. */
  serviceUrl: string;
  dataDir: string;
  /** A personal API token (SWITCHYARD_TOKEN), else the admin token (SWITCHYARD_ADMIN_TOKEN). */
  token: string | undefined;
  /** For `switchyard import unleash` when `--unleash-token` is not given. */
  unleashToken: string | undefined;
  /** The service's variables, for the commands that work on the data dir itself (`serve`, `admin-token reset`). */
  service: NodeJS.ProcessEnv;
}

export function readCliEnvironment(environment: NodeJS.ProcessEnv = process.env): CliEnvironment {
  const nonEmpty = (name: string): string | undefined => (environment[name] === "" ? undefined : environment[name]);
  return {
    serviceUrl: `http://127.0.0.1:${nonEmpty("SWITCHYARD_PORT") ?? "3000"}`,
    dataDir: nonEmpty("SWITCHYARD_DATA_DIR") ?? "./data",
    token: nonEmpty("SWITCHYARD_TOKEN") ?? nonEmpty("SWITCHYARD_ADMIN_TOKEN"),
    unleashToken: nonEmpty("UNLEASH_TOKEN"),
    service: environment,
  };
}

/** The credential a command uses: `--token`, else the environment's, else the admin token file of the data dir. */
export function commandCredential(explicit: string | undefined, environment: CliEnvironment): string {
  if (explicit) return explicit;
  if (environment.token) return environment.token;
  const file = join(environment.dataDir, ADMIN_TOKEN_FILE);
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  throw new Error("No credential: pass --token, set SWITCHYARD_TOKEN or SWITCHYARD_ADMIN_TOKEN, or run where the data dir is.");
}
