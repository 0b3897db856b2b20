import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { connect } from "node:net";

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Local port of the client socket, to tell whether two requests shared a connection. */
  localPort: number;
}

/** One request over node:http; a fresh connection each time unless an agent is given. */
export function send(
  port: number,
  options: { method?: string; path: string; headers?: OutgoingHttpHeaders; body?: string | Buffer; agent?: Agent },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: "127.0.0.1", port, method: options.method ?? "GET", path: options.path, headers: options.headers, agent: options.agent ?? false },
      (res) => readReply(res, resolve, reject),
    );
    req.on("error", reject);
    if (options.body !== undefined) req.setHeader("content-length", Buffer.byteLength(options.body));
    req.end(options.body);
  });
}

/** Reads a whole response into a Reply. */
function readReply(res: IncomingMessage, resolve: (reply: Reply) => void, reject: (error: Error) => void): void {
  const chunks: Buffer[] = [];
  const localPort = res.socket.localPort!;
  res.on("data", (chunk: Buffer) => chunks.push(chunk));
  res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), localPort }));
  res.on("error", reject);
}

export function jsonOf(reply: Reply): any {
  return JSON.parse(reply.body.toString());
}

export interface RawReply {
  status: number;
  head: string;
  body: string;
}

/**
 * Writes `data` on a plain TCP connection and reads one response: for requests node:http's client will not send
 * (a body cut short, a chosen chunking). Resolves once the response is complete by its content-length, or when
 * the server closes the connection.
 */
export function sendRaw(port: number, data: string | Buffer, options: { end?: boolean } = {}): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (): boolean => {
      const text = received.toString("latin1");
      const headEnd = text.indexOf("\r\n\r\n");
      if (headEnd === -1) return false;
      const head = text.slice(0, headEnd);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      let body = text.slice(headEnd + 4);
      if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
        const decoded = decodeChunked(body);
        if (decoded === undefined) return false;
        body = decoded;
      } else if (length) {
        if (body.length < Number(length[1])) return false;
        body = body.slice(0, Number(length[1]));
      }
      settled = true;
      socket.destroy();
      resolve({ status: Number(head.split(" ")[1]), head, body });
      return true;
    };
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      finish();
    });
    socket.on("close", () => {
      if (!settled && !finish()) reject(new Error(`connection closed after ${received.length} bytes: ${received.toString("latin1")}`));
    });
    socket.on("error", (error) => {
      if (!settled && !finish()) reject(error);
    });
    socket.write(data);
    if (options.end) socket.end();
  });
}

/** The payload of a complete chunked body, or undefined while its last chunk has not arrived. */
function decodeChunked(raw: string): string | undefined {
  let payload = "";
  let at = 0;
  for (;;) {
    const lineEnd = raw.indexOf("\r\n", at);
    if (lineEnd === -1) return undefined;
    const size = Number.parseInt(raw.slice(at, lineEnd), 16);
    if (size === 0) return payload;
    if (raw.length < lineEnd + 2 + size + 2) return undefined;
    payload += raw.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/** Opens a request whose response stays open; resolves with the response once its headers have arrived. */
export function openStream(port: number, path: string, headersTimeoutMs = 3000) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; chunks: string[]; ended: Promise<void>; destroy(): void }>((resolve, reject) => {
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`the response headers of ${path} did not arrive within ${headersTimeoutMs} ms`));
    }, headersTimeoutMs);
    const req = httpRequest({ host: "127.0.0.1", port, path, agent: false }, (res) => {
      clearTimeout(timer);
      const chunks: string[] = [];
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => chunks.push(chunk));
      const ended = new Promise<void>((resolveEnded) => {
        res.on("end", resolveEnded);
        res.on("close", resolveEnded);
        res.on("error", () => resolveEnded());
      });
      resolve({ status: res.statusCode!, headers: res.headers, chunks, ended, destroy: () => req.destroy() });
    });
    req.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end();
  });
}

/** Polls `check` until it returns true; fails after `timeoutMs`. */
export async function eventually(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * A body written through node:http's client in pieces, as an uploading backend writes it: with a declared
 * content-length, or chunked when `declareLength` is false. Rejects on EPIPE or a reset, so a front end that closes
 * before the client is done writing fails the caller instead of answering it.
 */
export function sendInPieces(
  port: number,
  options: { method?: string; path: string; headers?: OutgoingHttpHeaders; totalBytes: number; pieceBytes: number; pauseMs?: number; declareLength?: boolean },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: OutgoingHttpHeaders = { "content-type": "application/json", ...options.headers };
    if (options.declareLength !== false) headers["content-length"] = options.totalBytes;
    const req = httpRequest({ host: "127.0.0.1", port, method: options.method ?? "POST", path: options.path, headers, agent: false }, (res) =>
      readReply(res, resolve, reject),
    );
    req.on("error", reject);
    const piece = Buffer.alloc(options.pieceBytes, "x");
    let written = 0;
    const writeNext = (): void => {
      if (req.destroyed) return;
      if (written >= options.totalBytes) {
        req.end();
        return;
      }
      const part = piece.subarray(0, Math.min(piece.length, options.totalBytes - written));
      written += part.length;
      const next = () => (options.pauseMs ? setTimeout(writeNext, options.pauseMs) : setImmediate(writeNext));
      if (req.write(part)) next();
      else req.once("drain", next);
    };
    writeNext();
  });
}
