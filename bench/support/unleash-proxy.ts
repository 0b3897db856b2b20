/**
 * The Unleash Proxy 1.4.19 (npm `@unleash/proxy`), started on 127.0.0.1 in front of a running Unleash with a
 * server-side token, for the peers benchmark.
 *
 * Like unleash-server (support/unleash.ts), it is not a dependency of this project: it is installed once from the npm
 * registry into a cache dir outside the repo (SWITCHYARD_UNLEASH_PROXY_DIR, default
 * $TMPDIR/switchyard-unleash-proxy-1.4.19; about 190 packages, 20 s) and reused.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts } from "./free-ports.js";

export const UNLEASH_PROXY_VERSION = "1.4.19";
/** The key a frontend SDK sends the proxy (its `clientKeys`). */
export const UNLEASH_PROXY_CLIENT_KEY = "switchyard-bench-proxy-client-key";

export type ProxyPrerequisites = { ok: true; proxyDir: string } | { ok: false; reason: string };

/** Installs @unleash/proxy into its cache dir when missing; never throws. */
export function prepareUnleashProxy(): ProxyPrerequisites {
  const proxyDir = process.env.SWITCHYARD_UNLEASH_PROXY_DIR ?? join(tmpdir(), `switchyard-unleash-proxy-${UNLEASH_PROXY_VERSION}`);
  if (!existsSync(join(proxyDir, "node_modules", "@unleash", "proxy", "package.json"))) {
    try {
      mkdirSync(proxyDir, { recursive: true });
      writeFileSync(join(proxyDir, "package.json"), JSON.stringify({ name: "switchyard-unleash-proxy-cache", private: true }));
      execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", `@unleash/proxy@${UNLEASH_PROXY_VERSION}`], { cwd: proxyDir, stdio: "pipe", timeout: 240_000 });
    } catch (error) {
      return { ok: false, reason: `npm could not install @unleash/proxy@${UNLEASH_PROXY_VERSION}: ${String((error as Error).message).split("\n")[0]}` };
    }
  }
  return { ok: true, proxyDir };
}

export interface RunningProxy {
  /** `http://127.0.0.1:<port>`; the frontend route is `/proxy`. */
  url: string;
  clientKey: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the proxy against `unleashUrl` with a client token, and waits until it has read Unleash's features (it
 * answers 503 until then). Its own server.js listens on every interface, so a small script calls createApp and
 * listens on 127.0.0.1.
 */
export async function startUnleashProxy(prerequisites: Extract<ProxyPrerequisites, { ok: true }>, unleashUrl: string, clientToken: string): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-unleash-proxy-run-"));
  const [port] = await freePorts(1);
  const script = join(dir, "start-proxy.cjs");
  writeFileSync(
    script,
    `const { createApp } = require(${JSON.stringify(join(prerequisites.proxyDir, "node_modules", "@unleash", "proxy"))});
const app = createApp({
  unleashUrl: ${JSON.stringify(`${unleashUrl}/api/`)},
  unleashApiToken: ${JSON.stringify(clientToken)},
  clientKeys: [${JSON.stringify(UNLEASH_PROXY_CLIENT_KEY)}],
  environment: "production",
  logLevel: "error",
});
app.listen(${port}, "127.0.0.1");`,
  );
  const child: ChildProcess = spawn(process.execPath, [script], { stdio: ["ignore", "ignore", "pipe"], env: { PATH: process.env.PATH ?? "", NODE_ENV: "production" } });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      child.kill("SIGKILL");
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await fetch(`${url}/proxy`, { headers: { authorization: UNLEASH_PROXY_CLIENT_KEY } }).then((response) => response.status === 200, () => false);
    if (ready) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the Unleash Proxy did not start: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { url, clientKey: UNLEASH_PROXY_CLIENT_KEY, pid: child.pid!, stop };
}
