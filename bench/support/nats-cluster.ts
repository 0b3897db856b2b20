/**
 * A real three-server NATS cluster with JetStream on 127.0.0.1, for the cluster tests and benchmarks: Debian's
 * `nats-server` (installed by .ci/run), ephemeral ports, store directories in a temp dir. Servers can be killed and
 * started again on the same ports and store, as an operator's restart would.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts } from "./free-ports.js";

export interface NatsServerHandle {
  name: string;
  clientPort: number;
  url: string;
  /** SIGKILL: no goodbye to the cluster, as a crashed machine. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and store directory. */
  start(): Promise<void>;
  running(): boolean;
  /** The running process's id (for reading its CPU time), undefined when it is not running. */
  pid(): number | undefined;
}

export interface NatsCluster {
  servers: NatsServerHandle[];
  /** The CA clients must trust, when the servers speak TLS. */
  caFile: string | undefined;
  /** Client credentials every server requires, when started with some. */
  auth: NatsAuth | undefined;
  /** Every server's client URL, comma-separated: what SWITCHYARD_CLUSTER_URL takes. */
  urls: string;
  stop(): Promise<void>;
}

export interface NatsAuth {
  user: string;
  password: string;
}

export interface NatsClusterOptions {
  size?: number;
  auth?: NatsAuth;
  /** Serve clients over TLS with a throwaway CA (openssl); clients then trust `caFile`. */
  tls?: boolean;
}

/** How a client connects to `cluster`: trusting its CA and with its credentials, when it has them. */
export function clientCredentials(cluster: Pick<NatsCluster, "caFile" | "auth">): { tls?: { caFile: string }; user?: string; pass?: string } {
  return { ...(cluster.caFile ? { tls: { caFile: cluster.caFile } } : {}), ...(cluster.auth ? { user: cluster.auth.user, pass: cluster.auth.password } : {}) };
}

/** A throwaway CA and a server certificate for 127.0.0.1, made with openssl in `dir`. */
function makeCertificates(dir: string): { caFile: string; certFile: string; keyFile: string } {
  const run = (args: string[]) => {
    const result = spawnSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
  };
  run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=switchyard-test-ca", "-keyout", "ca.key", "-out", "ca.pem"]);
  run(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key", "-out", "server.csr"]);
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  run(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1", "-extfile", "san.ext", "-out", "server.pem"]);
  return { caFile: join(dir, "ca.pem"), certFile: join(dir, "server.pem"), keyFile: join(dir, "server.key") };
}

/** NATS_SERVER_BIN when set (another build, or a missing one to see the benchmark skip); else where Debian puts it (not on a non-root PATH), else whatever the PATH finds. */
export function natsServerBinary(): string {
  if (process.env.NATS_SERVER_BIN) return process.env.NATS_SERVER_BIN;
  return existsSync("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : "nats-server";
}

/** Waits until the server's log shows `pattern` (it logs to stderr). */
function waitForLog(child: ChildProcess, name: string, pattern: RegExp, timeoutMs: number): Promise<void> {
  return new Promise((resolveReady, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`nats-server ${name}: no ${pattern} within ${timeoutMs} ms:\n${text}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (pattern.test(text)) {
        clearTimeout(timer);
        child.stderr!.off("data", onData);
        resolveReady();
      }
    };
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`nats-server ${name} exited with ${code}:\n${text}`));
    });
  });
}

/** Starts `size` servers forming one JetStream cluster; resolves once every one is ready. */
export async function startNatsCluster(options: NatsClusterOptions = {}): Promise<NatsCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options.size ?? 3, options.auth, options.tls === true);
    } catch (error) {
      // A port taken by another process between our check and nats-server's bind: try other ports.
      // A cluster that never elected a metadata leader (a port of ours answered by someone else's server): again.
      const retryable = String(error).includes("address already in use") || String(error).includes("metadata leader");
      if (attempt === 3 || !retryable) throw error;
    }
  }
}

async function startOnce(size: number, auth: NatsAuth | undefined, tls: boolean): Promise<NatsCluster> {
  const root = mkdtempSync(join(tmpdir(), "switchyard-nats-"));
  const certificates = tls ? makeCertificates(root) : undefined;
  const ports = await freePorts(size * 2);
  const clientPorts = ports.slice(0, size);
  const routePorts = ports.slice(size);
  const servers = clientPorts.map((clientPort, index): NatsServerHandle => {
    const name = `n${index + 1}`;
    const store = join(root, name);
    mkdirSync(store, { recursive: true });
    const configFile = join(root, `${name}.conf`);
    const routes = routePorts.filter((_, other) => other !== index).map((port) => `"nats-route://127.0.0.1:${port}"`);
    writeFileSync(
      configFile,
      [
        `server_name: ${name}`,
        `listen: "127.0.0.1:${clientPort}"`,
        `jetstream { store_dir: "${store}", max_memory_store: 64MB, max_file_store: 1GB }`,
        `cluster { name: switchyard-test, listen: "127.0.0.1:${routePorts[index]}", routes: [${routes.join(", ")}] }`,
        // Clients only: the routes between the servers need no credentials here.
        ...(auth ? [`authorization { user: "${auth.user}", password: "${auth.password}" }`] : []),
        ...(certificates ? [`tls { cert_file: "${certificates.certFile}", key_file: "${certificates.keyFile}" }`] : []),
        "",
      ].join("\n"),
    );
    let child: ChildProcess | undefined;
    return {
      name,
      clientPort,
      url: `${tls ? "tls" : "nats"}://127.0.0.1:${clientPort}`,
      running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
      pid: () => (child !== undefined && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
      async start() {
        child = spawn(natsServerBinary(), ["-c", configFile], { stdio: ["ignore", "ignore", "pipe"] });
        child.stderr!.resume();
        // JetStream answers only once the cluster elected a metadata leader (every server logs who it is).
        await waitForLog(child, name, /metadata leader/, 45_000);
      },
      async kill() {
        const running = child;
        if (!running || running.exitCode !== null || running.signalCode !== null) return;
        const exited = new Promise((resolveExit) => running.once("exit", resolveExit));
        running.kill("SIGKILL");
        await exited;
      },
    };
  });
  try {
    await Promise.all(servers.map((server) => server.start()));
  } catch (error) {
    await Promise.all(servers.map((server) => server.kill()));
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return {
    servers,
    auth,
    caFile: certificates?.caFile,
    urls: servers.map((server) => server.url).join(","),
    async stop() {
      await Promise.all(servers.map((server) => server.kill()));
      rmSync(root, { recursive: true, force: true });
    },
  };
}
