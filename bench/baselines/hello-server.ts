/**
 * The transport ceiling the service is measured against: a server that does nothing but answer a 60-byte JSON body,
 * as a child process so that it gets a core of its own like the service does. `node hello-server.js uws|node`
 * listens on 127.0.0.1 with an ephemeral port and prints `{"message":"listening","port":N}`.
 *
 * GET answers at once; POST first reads the whole body (copying chunks, as the real front end must), then answers.
 * `node hello-server.js uws BYTES` answers GETs with a JSON body of BYTES bytes instead: the transport's cost of an
 * answer as large as an evaluation's.
 */
import { createServer } from "node:http";
import { loadNativeUws } from "../../src/http/load-uws.js";
import type { HttpResponse } from "uWebSockets.js";
import { whenBodyRead } from "./uws-body.js";

/** Exactly 60 bytes, the size of a small SDK answer. */
export const HELLO_BODY = '{"success":true,"message":"hello world","padding":"xxxxxxx"}';

function announce(port: number): void {
  process.stdout.write(`${JSON.stringify({ message: "listening", port })}\n`);
}

/** A JSON body of exactly `bytes` bytes (at least the hello body's 60). */
export function paddedBody(bytes: number): Buffer {
  const padding = Math.max(0, bytes - HELLO_BODY.length);
  return Buffer.from(`{"success":true,"message":"hello world","padding":"${"x".repeat(7 + padding)}"}`);
}

function serveUws(getBodyBytes: number | undefined): void {
  const uws = loadNativeUws();
  const app = uws.App();
  const getBody = getBodyBytes === undefined ? HELLO_BODY : paddedBody(getBodyBytes);
  app.get("/*", (res) => {
    res.cork(() => {
      res.writeHeader("content-type", "application/json").end(getBody);
    });
  });
  app.post("/*", (res) => {
    whenBodyRead(res, () => {
      res.cork(() => {
        res.writeHeader("content-type", "application/json").end(HELLO_BODY);
      });
    });
  });
  app.listen("127.0.0.1", 0, (socket) => {
    if (!socket) throw new Error("hello-world uWebSockets.js server could not listen");
    announce(uws.us_socket_local_port(socket));
  });
}

/**
 * The same GET answer, sent a turn later as the service sends every answer that comes back from its pool: the query
 * copied out of the request (it is gone once the handler returns), an abort handler, and the answers of one turn
 * written together under `cork`. Set beside the plain server it prices answering outside uWebSockets.js's handler;
 * the hop to a worker and back is priced on its own (bench/workers/hop.ts).
 */
function serveUwsDeferred(getBodyBytes: number | undefined): void {
  const uws = loadNativeUws();
  const app = uws.App();
  const getBody = getBodyBytes === undefined ? Buffer.from(HELLO_BODY) : paddedBody(getBodyBytes);
  const waiting: { res: HttpResponse; aborted: boolean; query: string }[] = [];
  const answerAll = () => {
    for (const pending of waiting) {
      if (pending.aborted) continue;
      pending.res.cork(() => {
        pending.res.writeHeader("content-type", "application/json").end(getBody);
      });
    }
    waiting.length = 0;
  };
  app.get("/*", (res, req) => {
    // The query is copied out as the service must (the request is gone once the handler returns).
    const pending = { res, aborted: false, query: req.getQuery() ?? "" };
    res.onAborted(() => {
      pending.aborted = true;
    });
    if (waiting.push(pending) === 1) setImmediate(answerAll);
  });
  app.listen("127.0.0.1", 0, (socket) => {
    if (!socket) throw new Error("deferred uWebSockets.js server could not listen");
    announce(uws.us_socket_local_port(socket));
  });
}

function serveNode(): void {
  const server = createServer((request, response) => {
    const answer = () => {
      response.writeHead(200, { "content-type": "application/json", "content-length": HELLO_BODY.length });
      response.end(HELLO_BODY);
    };
    if (request.method === "GET") {
      answer();
      return;
    }
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", answer);
  });
  server.keepAliveTimeout = 10_000;
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("unexpected address");
    announce(address.port);
  });
}

const USAGE = `node dist/bench/baselines/hello-server.js [uws|uws-deferred|node] [BYTES]

The transport ceiling: a bare server on 127.0.0.1 (ephemeral port, printed as {"message":"listening","port":N}) that
answers every GET with a 60-byte JSON body (BYTES bytes with uws BYTES) and every POST, once its body is read, with
the same. uws: uWebSockets.js (default); uws-deferred: the same GET answer a turn later, as the service answers what
comes back from its pool (query copied, abort handler, one turn's answers under cork); node: node:http.
`;

// Run only as an entry point (the report imports HELLO_BODY).
if (process.argv[1]?.endsWith("hello-server.js") && (process.argv.includes("--help") || process.argv.includes("-h"))) process.stdout.write(USAGE);
else if (process.argv[1]?.endsWith("hello-server.js")) {
  const kind = process.argv[2] ?? "uws";
  const bytes = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
  if (kind === "uws") serveUws(bytes);
  else if (kind === "uws-deferred") serveUwsDeferred(bytes);
  else if (kind === "node") serveNode();
  else throw new Error(`unknown hello-world server kind ${kind}`);
  process.on("SIGTERM", () => process.exit(0));
}
