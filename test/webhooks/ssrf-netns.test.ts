/**
 * safePost against real sockets, run inside a network namespace that has only loopback: even a bug in the checks
 * cannot send a packet off this machine. The file re-executes itself under `unshare -n` (CI runs as root); outside
 * CI, without root or unshare, it skips and says why; in CI it fails instead.
 */
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import { tmpdir } from "node:os";
import { connect, type AddressInfo, type Socket } from "node:net";
import { networkInterfaces } from "node:os";
import { fileURLToPath } from "node:url";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checkWebhookUrl, parseAllowList, safePost, type LookupFunction, type SafePostPolicy } from "../../src/management/webhooks/safe-post.js";

const INSIDE = process.env.SWITCHYARD_TEST_NETNS === "1";
const THIS_FILE = fileURLToPath(import.meta.url);
const ROOT = resolve(import.meta.dirname, "../..");

function namespaceUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "not root: unshare -n needs root (CI runs as root)";
  for (const tool of ["unshare", "ip"]) {
    if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) return `${tool} is not installed`;
  }
  // Root in a container may still lack the capability to make a namespace.
  const probe = spawnSync("unshare", ["-n", "true"]);
  if (probe.status !== 0) return `unshare -n fails here: ${String(probe.stderr).trim()}`;
  return undefined;
}

if (!INSIDE) {
  describe("SSRF checks on real sockets", () => {
    it("pass inside a network namespace with only loopback", async (context) => {
      const missing = namespaceUnavailable();
      if (missing !== undefined) {
        if (process.env.CI !== undefined && !["", "0", "false"].includes(process.env.CI)) throw new Error(`the SSRF network tests cannot run: ${missing}`);
        console.warn(`SKIPPED the SSRF network tests: ${missing}`);
        context.skip(missing);
      }
      const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("VITEST"))) as Record<string, string>;
      const child = spawn("unshare", ["-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", process.execPath, resolve(ROOT, "node_modules/vitest/vitest.mjs"), "run", THIS_FILE], {
        cwd: ROOT,
        env: { ...env, SWITCHYARD_TEST_NETNS: "1", NO_COLOR: "1", FORCE_COLOR: "0" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const [code] = (await once(child, "close")) as [number | null];
      expect(output).not.toMatch(/skipped|failed/i);
      expect(Number(/Tests\s+(\d+) passed/.exec(output)?.[1] ?? 0), output).toBeGreaterThanOrEqual(20);
      expect(code, output).toBe(0);
    }, 120_000);
  });
} else {
  describe("safePost inside a loopback-only namespace", () => {
    let server: Server;
    let port = 0;
    let connections = 0;
    const requests: { method: string; url: string; headers: IncomingMessage["headers"]; body: string }[] = [];
    const sockets = new Set<Socket>();
    let respond: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => response.end("ok");

    /** Names the test decides: each lookup is counted, and a name may answer differently on later calls. */
    const lookups = new Map<string, number>();
    const table: Record<string, string[]> = {
      "evil.test": ["10.0.0.1"],
      "meta.test": ["169.254.169.254"],
      "receiver.test": ["127.0.0.1"],
    };
    const lookup: LookupFunction = (name, options, callback) => {
      const calls = (lookups.get(name) ?? 0) + 1;
      lookups.set(name, calls);
      expect(options.all).toBe(true);
      // Rebinding: the first answer passes the check, every later one points into the private network.
      const address = name === "rebind.test" || name === "flip.test" ? (calls === 1 ? "127.0.0.1" : "10.0.0.1") : table[name]?.[0];
      if (address === undefined) callback(Object.assign(new Error(`unknown ${name}`), { code: "ENOTFOUND" }), []);
      else callback(null, [{ address, family: 4 }]);
    };
    const policy = (extra: Partial<SafePostPolicy> = {}): SafePostPolicy => ({ allow: parseAllowList("127.0.0.1/32"), lookup, timeoutMs: 2000, ...extra });

    beforeAll(async () => {
      server = createServer((request, response) => {
        let body = "";
        request.setEncoding("utf8");
        request.on("data", (chunk: string) => (body += chunk));
        request.on("end", () => {
          requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
          respond(request, response);
        });
      });
      server.on("connection", (socket: Socket) => {
        connections += 1;
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket));
      });
      server.listen(0, "127.0.0.1");
      await once(server, "listening");
      port = (server.address() as AddressInfo).port;
    });
    afterEach(() => {
      connections = 0;
      requests.length = 0;
      lookups.clear();
      respond = (_request, response) => response.end("ok");
      for (const socket of sockets) socket.destroy();
    });
    afterAll(async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    });

    it("runs where no packet can leave: loopback is the only interface and 10.0.0.1 has no route", async () => {
      expect(Object.keys(networkInterfaces())).toEqual(["lo"]);
      const socket = connect(80, "10.0.0.1");
      const [error] = (await once(socket, "error").catch((caught: unknown) => [caught])) as [NodeJS.ErrnoException];
      expect(error.code).toBe("ENETUNREACH");
    });

    it("delivers to an allowed receiver the exact body and headers, with the name kept as Host", async () => {
      const body = JSON.stringify({ type: "feature.updated", note: "ünïcødé ✓ <&>" });
      const outcome = await safePost(`http://receiver.test:${port}/hooks/in?team=1`, body, { "content-type": "application/json", "webhook-id": "msg_1", "webhook-signature": "v1,abc=" }, policy());
      expect(outcome).toMatchObject({ status: 200, error: null, body: "ok" });
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({ method: "POST", url: "/hooks/in?team=1", body });
      expect(requests[0]!.headers).toMatchObject({
        host: `receiver.test:${port}`,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "webhook-id": "msg_1",
        "webhook-signature": "v1,abc=",
      });
      expect(lookups.get("receiver.test")).toBe(1);
    });

    it("refuses a name resolving to a private address before any connection", async () => {
      const outcome = await safePost(`http://evil.test:${port}/`, "{}", {}, policy());
      expect(outcome).toMatchObject({ status: null, error: "refused: evil.test resolves to 10.0.0.1 is a private (RFC 1918) address", body: "" });
      expect(outcome.error).not.toMatch(/ENETUNREACH|connection failed/);
      expect(connections).toBe(0);
    });

    it("refuses a name resolving to the cloud metadata address", async () => {
      const outcome = await safePost(`http://meta.test:${port}/latest/meta-data/`, "{}", {}, policy());
      expect(outcome.status).toBeNull();
      expect(outcome.error).toMatch(/^refused: meta\.test resolves to 169\.254\.169\.254 is a link-local address/);
      expect(connections).toBe(0);
    });

    it.each(["http://2130706433:PORT/", "http://0x7f000001:PORT/", "http://0177.0.0.1:PORT/", "http://127.1:PORT/", "http://[::ffff:127.0.0.1]:PORT/", "http://[::1]:PORT/", "http://localhost:PORT/"])(
      "refuses %s, which points at the listening receiver, when nothing is allowed",
      async (template) => {
        const outcome = await safePost(template.replace("PORT", String(port)), "{}", {}, { allow: parseAllowList(undefined), lookup: (name, options, callback) => (name === "localhost" ? callback(null, [{ address: "127.0.0.1", family: 4 }]) : lookup(name, options, callback)), timeoutMs: 2000 });
        expect(outcome.status).toBeNull();
        expect(outcome.error).toMatch(/^refused: .*loopback/);
        expect(connections).toBe(0);
      },
    );

    it("refuses a rebinding name at the attempt although it passed the check at creation", async () => {
      expect(await checkWebhookUrl(`http://rebind.test:${port}/`, policy())).toEqual({ ok: true, addresses: ["127.0.0.1"] });
      const outcome = await safePost(`http://rebind.test:${port}/`, "{}", {}, policy());
      expect(outcome.error).toBe("refused: rebind.test resolves to 10.0.0.1 is a private (RFC 1918) address");
      expect(connections).toBe(0);
    });

    it("connects to the address it checked and never resolves the name a second time", async () => {
      // A second lookup would answer 10.0.0.1, which this namespace cannot reach.
      const outcome = await safePost(`http://flip.test:${port}/`, "{}", {}, policy());
      expect(outcome).toMatchObject({ status: 200, error: null });
      expect(lookups.get("flip.test")).toBe(1);
      expect(requests[0]!.headers.host).toBe(`flip.test:${port}`);
    });

    it("does not follow a redirect: one request, the 3xx recorded with its Location", async () => {
      respond = (_request, response) => response.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` }).end();
      const outcome = await safePost(`http://127.0.0.1:${port}/hook`, "{}", {}, policy());
      expect(outcome).toMatchObject({ status: 302, error: `redirect (302) not followed: Location http://127.0.0.1:${port}/elsewhere` });
      expect(requests.map((request) => request.url)).toEqual(["/hook"]);
    });

    it("ends an attempt at the timeout when the receiver never answers", async () => {
      respond = () => undefined;
      const outcome = await safePost(`http://127.0.0.1:${port}/`, "{}", {}, policy({ timeoutMs: 300 }));
      expect(outcome).toMatchObject({ status: null, error: "timed out after 300 ms", body: "" });
      expect(outcome.durationMs).toBeGreaterThanOrEqual(250);
    });

    it("counts resolving in the timeout: a resolver that never answers costs one attempt", async () => {
      const silent: LookupFunction = () => undefined;
      const outcome = await safePost(`http://receiver.test:${port}/`, "{}", {}, policy({ lookup: silent, timeoutMs: 300 }));
      expect(outcome).toMatchObject({ status: null, error: "timed out after 300 ms", body: "" });
      expect(connections).toBe(0);
    });

    it("ends an attempt at the timeout when a failing receiver trickles its body", async () => {
      respond = (_request, response) => {
        response.writeHead(500);
        response.write("slow");
      };
      const outcome = await safePost(`http://127.0.0.1:${port}/`, "{}", {}, policy({ timeoutMs: 300 }));
      expect(outcome).toMatchObject({ status: 500, error: "timed out after 300 ms", body: "slow" });
    });

    it("keeps 4 KiB of a huge body and stops reading an endless one", async () => {
      respond = (_request, response) => response.end("x".repeat(1_000_000));
      const huge = await safePost(`http://127.0.0.1:${port}/`, "{}", {}, policy());
      expect(huge).toMatchObject({ status: 200, error: null });
      expect(huge.body).toBe("x".repeat(4096));

      let serverSocketClosed = false;
      respond = (request, response) => {
        response.writeHead(200);
        const chunk = "y".repeat(1024);
        const pump = setInterval(() => response.write(chunk), 5);
        request.socket.on("close", () => {
          clearInterval(pump);
          serverSocketClosed = true;
        });
      };
      const endless = await safePost(`http://127.0.0.1:${port}/`, "{}", {}, policy({ timeoutMs: 10_000, maxResponseBytes: 4096 }));
      expect(endless).toMatchObject({ status: 200, error: null, body: "y".repeat(4096) });
      await expect.poll(() => serverSocketClosed).toBe(true);
    });

    it("keeps the name for TLS: SNI is the URL's host and an untrusted certificate is refused", async () => {
      const dir = mkdtempSync(join(tmpdir(), "switchyard-tls-"));
      try {
        const made = spawnSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "1", "-subj", "/CN=secure.test", "-addext", "subjectAltName=DNS:secure.test"]);
        expect(made.status, String(made.stderr)).toBe(0);
        const names: string[] = [];
        const sni: string[] = [];
        const tls = createTlsServer({ key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }, (_request, response) => response.end("ok"));
        // The name the client asked for (SNI), as the server heard it, whether the handshake completed or not.
        tls.on("secureConnection", (socket: { servername?: string | false }) => sni.push(String(socket.servername)));
        tls.on("tlsClientError", (_error: Error, socket: { servername?: string | false }) => sni.push(String(socket.servername)));
        tls.listen(0, "127.0.0.1");
        await once(tls, "listening");
        const tlsPort = (tls.address() as AddressInfo).port;
        const secureTable: LookupFunction = (name, _options, callback) => {
          names.push(name);
          callback(null, [{ address: "127.0.0.1", family: 4 }]);
        };
        const outcome = await safePost(`https://secure.test:${tlsPort}/`, "{}", {}, policy({ lookup: secureTable }));
        expect(outcome.status).toBeNull();
        expect(outcome.error).toMatch(/^connection failed: (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/);
        expect(names).toEqual(["secure.test"]);
        await expect.poll(() => sni).toEqual(["secure.test"]);
        tls.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("records a failing status, a refused connection and a bad header as outcomes, never throwing", async () => {
      respond = (_request, response) => response.writeHead(503).end("down");
      expect(await safePost(`http://127.0.0.1:${port}/`, "{}", {}, policy())).toMatchObject({ status: 503, error: "the receiver answered 503", body: "down" });

      const closed = createServer();
      closed.listen(0, "127.0.0.1");
      await once(closed, "listening");
      const closedPort = (closed.address() as AddressInfo).port;
      closed.close();
      await once(closed, "close");
      expect(await safePost(`http://127.0.0.1:${closedPort}/`, "{}", {}, policy())).toMatchObject({ status: null, error: "connection failed: ECONNREFUSED" });

      const badHeader = await safePost(`http://127.0.0.1:${port}/`, "{}", { "x-bad": "a\nb" }, policy());
      expect(badHeader.status).toBeNull();
      expect(badHeader.error).toMatch(/x-bad/i);
      expect(await safePost("ftp://127.0.0.1/", "{}", {}, policy())).toMatchObject({ status: null, error: "refused: the scheme must be http or https, not ftp" });
      expect(await safePost(`http://unknown.test:${port}/`, "{}", {}, policy())).toMatchObject({ status: null, error: "refused: unknown.test could not be resolved (ENOTFOUND)" });
      expect(connections).toBe(1);
    });
  });
}
