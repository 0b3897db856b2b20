/**
 * A real Unleash 6.4.1 on a real PostgreSQL, both started in a temp dir on 127.0.0.1: for the importer's test
 * (test/operations/unleash-import.test.ts) and the peers benchmark (bench/peers/), one copy for both.
 *
 * unleash-server is not a dependency of this project (it brings about 360 packages, 167 MB: `npm ci` for everyone
 * would pay for one test file). It is installed once from the npm registry into a cache dir outside the repo
 * (SWITCHYARD_UNLEASH_DIR, default $TMPDIR/switchyard-unleash-6.4.1; about 30 s) and reused. PostgreSQL is Debian's
 * `postgresql` package (.ci/run installs it). When either cannot be had, `prepareUnleash` says why and the suite skips.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts } from "./free-ports.js";

export const UNLEASH_VERSION = "6.4.1";
export const UNLEASH_ADMIN_TOKEN = "*:*.switchyard-import-test-admin-token";
/** For Unleash's own frontend API (`/api/frontend`), production environment. */
export const UNLEASH_FRONTEND_TOKEN = "*:production.switchyard-bench-frontend-token";
/** A server-side SDK token for production: what the Unleash Proxy reads Unleash with. */
export const UNLEASH_CLIENT_TOKEN = "*:production.switchyard-bench-client-token";

export type UnleashPrerequisites = { ok: true; pgBin: string; unleashDir: string } | { ok: false; reason: string };

function postgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((name) => existsSync(join(root, name, "bin", "initdb"))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], "bin");
  }
  try {
    const bin = execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
    return existsSync(join(bin, "initdb")) ? bin : undefined;
  } catch {
    return undefined;
  }
}

/** Finds PostgreSQL and installs unleash-server into its cache dir when missing; never throws. */
export function prepareUnleash(): UnleashPrerequisites {
  const pgBin = postgresBin();
  if (!pgBin) return { ok: false, reason: "PostgreSQL's initdb was not found (apt-get install postgresql)" };
  const unleashDir = process.env.SWITCHYARD_UNLEASH_DIR ?? join(tmpdir(), `switchyard-unleash-${UNLEASH_VERSION}`);
  if (!existsSync(join(unleashDir, "node_modules", "unleash-server", "package.json"))) {
    try {
      mkdirSync(unleashDir, { recursive: true });
      writeFileSync(join(unleashDir, "package.json"), JSON.stringify({ name: "switchyard-unleash-cache", private: true }));
      execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", `unleash-server@${UNLEASH_VERSION}`], { cwd: unleashDir, stdio: "pipe", timeout: 240_000 });
    } catch (error) {
      return { ok: false, reason: `npm could not install unleash-server@${UNLEASH_VERSION}: ${String((error as Error).message).split("\n")[0]}` };
    }
  }
  return { ok: true, pgBin, unleashDir };
}

export interface RunningUnleash {
  url: string;
  token: string;
  /** The Unleash server's process, and PostgreSQL's data dir (its postmaster.pid names the database's process). */
  pid: number;
  pgDataDir: string;
  /** An admin API call to Unleash; throws unless it answered 2xx. */
  call(method: string, path: string, body?: unknown): Promise<any>;
  stop(): Promise<void>;
}

/** PostgreSQL refuses to run as root: as root, it runs as Debian's `postgres` user. */
function asDatabaseUser(dir: string): string[] {
  if (process.getuid?.() !== 0) return [];
  const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
  chownSync(dir, uid, gid);
  return ["runuser", "-u", "postgres", "--"];
}

function run(prefix: string[], command: string, args: string[]): void {
  const [program, ...rest] = [...prefix, command, ...args];
  execFileSync(program!, rest, { stdio: "pipe", timeout: 60_000, cwd: tmpdir() });
}

export async function startUnleash(prerequisites: Extract<UnleashPrerequisites, { ok: true }>): Promise<RunningUnleash> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-unleash-run-"));
  const as = asDatabaseUser(dir);
  const [pgPort, unleashPort] = await freePorts(2);
  const pg = (name: string) => join(prerequisites.pgBin, name);
  run(as, pg("initdb"), ["-D", join(dir, "pg"), "-U", "unleash", "--auth=trust", "--no-sync"]);
  run(as, pg("pg_ctl"), ["-D", join(dir, "pg"), "-l", join(dir, "pg.log"), "-w", "-o", `-p ${pgPort} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, "start"]);
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      child.kill("SIGKILL");
    }
    try {
      run(as, pg("pg_ctl"), ["-D", join(dir, "pg"), "-m", "immediate", "-w", "stop"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    run(as, pg("createdb"), ["-h", "127.0.0.1", "-p", String(pgPort), "-U", "unleash", "unleash"]);
    const script = join(dir, "start-unleash.cjs");
    writeFileSync(
      script,
      `require(${JSON.stringify(join(prerequisites.unleashDir, "node_modules", "unleash-server"))}).start({
  db: { host: "127.0.0.1", port: ${pgPort}, user: "unleash", password: "unused", database: "unleash", ssl: false },
  server: { host: "127.0.0.1", port: ${unleashPort} },
  authentication: { initApiTokens: [
    { environment: "*", project: "*", secret: ${JSON.stringify(UNLEASH_ADMIN_TOKEN)}, type: "admin", tokenName: "switchyard-test" },
    { environment: "production", project: "*", secret: ${JSON.stringify(UNLEASH_FRONTEND_TOKEN)}, type: "frontend", tokenName: "switchyard-bench-frontend" },
    { environment: "production", project: "*", secret: ${JSON.stringify(UNLEASH_CLIENT_TOKEN)}, type: "client", tokenName: "switchyard-bench-client" },
  ] },
  logLevel: "error",
});`,
    );
    child = spawn(process.execPath, [script], { stdio: ["ignore", "ignore", "pipe"], env: { PATH: process.env.PATH ?? "", NODE_ENV: "production" } });
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    const url = `http://127.0.0.1:${unleashPort}`;
    const deadline = Date.now() + 90_000;
    for (;;) {
      const healthy = await fetch(`${url}/health`).then((response) => response.ok, () => false);
      if (healthy) break;
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`Unleash did not start: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(url + path, {
        method,
        headers: { authorization: UNLEASH_ADMIN_TOKEN, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`Unleash ${method} ${path}: ${response.status} ${text}`);
      return text === "" ? undefined : JSON.parse(text);
    };
    return { url, token: UNLEASH_ADMIN_TOKEN, pid: child.pid!, pgDataDir: join(dir, "pg"), call, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
