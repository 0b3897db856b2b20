import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import {
  isStreamResponse,
  type ApiCore,
  type ApiRequest,
  type ApiResponse,
  type FrontEnd,
  type FrontEndLimits,
  type RouteDecision,
  type StreamResponse,
  type StreamSink,
} from "../../src/http/types.js";
import { INTERNAL_ERROR, payloadTooLarge, runDecision } from "../../src/http/run-decision.js";
import { drainBound, drainsDeclaredLength, drainTime } from "../../src/http/over-limit-body.js";

/** A stream whose unsent output passes this is not keeping up: sink.write() says so and the core drops it. */
const STREAM_BACKLOG_LIMIT_BYTES = 1024 * 1024;
/**
 * Slow-loris bounds, matched to uWebSockets.js (which closes an HTTP connection idle for ~10 s): the header section
 * and the whole request (bounded body) must each arrive within 10 s.
 */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000;
/** How often node:http enforces the two timeouts above (its default, 30 s, would let a slow client linger 40 s). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
const MAX_HEADERS_COUNT = 100;
/** Room for ordinary headers beside a URL of the largest accepted length, so long URLs get our 414, not a 431. */
const HEADER_SECTION_HEADROOM_BYTES = 16 * 1024;


/** The front-end seam over node:http: the native-free twin of `src/http/uws-front-end.ts`. */
export function createNodeFrontEnd(core: ApiCore, limits: FrontEndLimits): FrontEnd {
  return new NodeFrontEnd(core, limits);
}

/** One request/response pair; it counts as in flight until answered, streaming, or abandoned by the client. */
class Exchange {
  private settled = false;

  constructor(
    readonly frontEnd: NodeFrontEnd,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
  ) {}

  settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.frontEnd.inFlightCount--;
  }

  /** Whether an answer can still be written. */
  get open(): boolean {
    return !this.res.headersSent && !this.res.destroyed;
  }
}

class NodeFrontEnd implements FrontEnd {
  readonly kind = "node-http" as const;
  inFlightCount = 0;
  readonly streams = new Set<NodeStreamSink>();
  private readonly server: Server;

  constructor(
    readonly core: ApiCore,
    readonly limits: FrontEndLimits,
  ) {
    this.server = createServer({
      maxHeaderSize: Math.max(16 * 1024, limits.maxUrlLength + HEADER_SECTION_HEADROOM_BYTES),
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      keepAliveTimeout: limits.idleTimeoutSeconds * 1000,
      // uWebSockets.js serves requests without a Host header; so do we, so both front ends accept the same clients.
      requireHostHeader: false,
    });
    this.server.maxHeadersCount = MAX_HEADERS_COUNT;
    this.server.on("request", (req: IncomingMessage, res: ServerResponse) => onRequest(this, req, res, false));
    // Expect: 100-continue is answered by us, so that an over-limit body is refused before the client sends it.
    this.server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => onRequest(this, req, res, true));
    this.server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => onClientError(this, error, socket));
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error): void => reject(error);
      this.server.once("error", onError);
      this.server.listen(port, host, () => {
        this.server.off("error", onError);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  stopListening(): void {
    // Since Node 19 close() also closes idle keep-alive connections; busy ones finish their request first.
    if (this.server.listening) this.server.close();
  }

  closeAll(): void {
    for (const sink of [...this.streams]) sink.end();
    this.server.closeIdleConnections();
    // One turn later, so the streams' final chunks are handed to the sockets before they are destroyed.
    setImmediate(() => this.server.closeAllConnections());
  }

  inFlight(): number {
    return this.inFlightCount;
  }
}

function onRequest(frontEnd: NodeFrontEnd, req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void {
  frontEnd.inFlightCount++;
  const exchange = new Exchange(frontEnd, req, res);
  // A client that goes away before its answer no longer counts; 'close' also follows every normal answer.
  res.once("close", () => exchange.settle());
  // Without a listener, an aborted upload's 'error' would be thrown as an uncaught exception.
  req.on("error", ignore);
  try {
    routeRequest(exchange, expectsContinue);
  } catch {
    send(exchange, INTERNAL_ERROR);
  }
}

function routeRequest(exchange: Exchange, expectsContinue: boolean): void {
  const { core, limits } = exchange.frontEnd;
  const { req, res } = exchange;
  const method = req.method ?? "GET";
  const url = req.url ?? "/";
  const mark = url.indexOf("?");
  const path = mark === -1 ? url : url.slice(0, mark);
  const query = mark === -1 ? "" : url.slice(mark + 1);
  const headers = headersOf(req.rawHeaders);
  // Counted as uWebSockets.js sees it, path plus query without the '?', so both front ends draw the line alike.
  if (path.length + query.length > limits.maxUrlLength) {
    send(exchange, core.reject("URI_TOO_LONG", { headers, method }), true);
    return;
  }
  const decision = core.decide(method, path);
  const request: ApiRequest = { method, path, query, headers, body: null, remoteAddress: () => req.socket.remoteAddress ?? "" };
  const contentLength = headers["content-length"];
  const hasBody = contentLength !== undefined ? contentLength !== "0" : headers["transfer-encoding"] !== undefined;
  if (decision.bodyLimit === 0 || !hasBody) {
    // Whatever body there is gets discarded as it arrives, not buffered.
    req.resume();
    dispatch(exchange, decision, request);
    return;
  }
  if (contentLength !== undefined && Number(contentLength) > decision.bodyLimit) {
    // A client waiting for 100-continue has sent nothing yet and sends nothing now: it can read the 413 at once.
    if (expectsContinue || !drainsDeclaredLength(Number(contentLength), decision.bodyLimit)) send(exchange, payloadTooLarge(core, decision, request), true);
    else drainThenRefuse(exchange, decision, request, 0);
    return;
  }
  if (expectsContinue) res.writeContinue();
  readBody(exchange, decision, request);
}

/** Buffers the body; once it passes the route's limit, the rest is drained and answered 413 (over-limit-body.ts). */
function readBody(exchange: Exchange, decision: RouteDecision, request: ApiRequest): void {
  const { req } = exchange;
  let chunks: Buffer[] = [];
  let received = 0;
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > decision.bodyLimit) {
      req.off("data", onData);
      req.off("end", onEnd);
      chunks = [];
      drainThenRefuse(exchange, decision, request, received);
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = (): void => {
    request.body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
    dispatch(exchange, decision, request);
  };
  req.on("data", onData);
  req.on("end", onEnd);
}

/**
 * Reads and discards the rest of an over-limit body, then answers 413 and closes: a client still writing would get
 * EPIPE instead of the answer. Past the drain bound (bytes or time) it answers at once.
 */
function drainThenRefuse(exchange: Exchange, decision: RouteDecision, request: ApiRequest, alreadyReceived: number): void {
  const { req, res } = exchange;
  const bound = drainBound(decision.bodyLimit);
  let received = alreadyReceived;
  const refuse = (): void => {
    clearTimeout(timer);
    req.off("data", onData);
    req.off("end", refuse);
    send(exchange, payloadTooLarge(exchange.frontEnd.core, decision, request), true);
  };
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > bound) refuse();
  };
  const timer = setTimeout(refuse, drainTime(exchange.frontEnd.limits));
  res.once("close", () => clearTimeout(timer));
  req.on("data", onData);
  req.on("end", refuse);
}

function dispatch(exchange: Exchange, decision: RouteDecision, request: ApiRequest): void {
  runDecision(decision, request, (response) => finish(exchange, response));
}

function finish(exchange: Exchange, response: ApiResponse | StreamResponse): void {
  try {
    if (isStreamResponse(response)) startStream(exchange, response);
    else send(exchange, response);
  } catch {
    // A malformed answer (bad status, bad header) is the core's fault; the client still gets the envelope.
    send(exchange, INTERNAL_ERROR);
  }
}

function send(exchange: Exchange, response: ApiResponse, closeConnection = false): void {
  const { res } = exchange;
  if (!exchange.open) {
    if (!res.headersSent || res.writableEnded) return;
    // The headers went out before the failure: the only honest signal left is to cut the connection.
    res.destroy();
    return;
  }
  exchange.settle();
  res.statusCode = response.status;
  if (response.headers) for (const name in response.headers) res.setHeader(name, response.headers[name]!);
  if (closeConnection) res.setHeader("connection", "close");
  // No writeHead(): left implicit, end() knows the whole body and sends a content-length instead of chunking.
  // node:http keeps a reference to bytes it cannot send at once; a transient body must be copied for it.
  res.end(response.transient === true && typeof response.body !== "string" ? Buffer.from(response.body) : response.body);
}

function startStream(exchange: Exchange, response: StreamResponse): void {
  if (!exchange.open) return;
  const { res } = exchange;
  res.writeHead(response.status, response.headers);
  // SSE clients wait for the status line and headers before they treat the stream as open.
  res.write(response.preamble);
  exchange.settle();
  const sink = new NodeStreamSink(exchange.frontEnd.streams, res);
  try {
    response.start(sink);
  } catch {
    sink.end();
  }
}

/** A StreamResponse's handle on the connection: writes, backpressure, and one close notification. */
class NodeStreamSink implements StreamSink {
  private closed = false;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly streams: Set<NodeStreamSink>,
    private readonly res: ServerResponse,
  ) {
    streams.add(this);
    res.once("close", () => this.markClosed());
  }

  write(chunk: string | Uint8Array): boolean {
    if (this.closed || this.res.destroyed) return false;
    this.res.write(chunk);
    return this.res.writableLength <= STREAM_BACKLOG_LIMIT_BYTES;
  }

  end(): void {
    if (this.closed) return;
    this.res.end();
    this.markClosed();
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.listeners.push(listener);
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.streams.delete(this);
    for (const listener of this.listeners.splice(0)) {
      try {
        listener();
      } catch {
        // A listener's failure must not escape into node:http's event handlers and take the process down.
      }
    }
  }
}

/** Lower-cased names; repeated headers joined with ", ". Null prototype: a header named "constructor" is just a header. */
function headersOf(rawHeaders: string[]): Record<string, string> {
  const headers = Object.create(null) as Record<string, string>;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const value = rawHeaders[i + 1]!;
    const previous = headers[name];
    headers[name] = previous === undefined ? value : `${previous}, ${value}`;
  }
  return headers;
}

/** Malformed HTTP and timeouts: answer with the envelope when the socket can still take it, then close it. */
function onClientError(frontEnd: NodeFrontEnd, error: NodeJS.ErrnoException, socket: Duplex): void {
  const inProgress = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || inProgress?.headersSent) {
    socket.destroy();
    return;
  }
  // A client too slow to finish its request is closed without an answer, as uWebSockets.js does (a 408 is not among
  // the statuses the contract documents).
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    socket.destroy();
    return;
  }
  let response: ApiResponse;
  try {
    // The header section is what the URL limit bounds (FrontEndLimits.maxUrlLength), hence 414 for an overflow.
    response = frontEnd.core.reject(error.code === "HPE_HEADER_OVERFLOW" ? "URI_TOO_LONG" : "INVALID_REQUEST", { headers: {}, method: "" });
  } catch {
    response = { status: 400, body: "" };
  }
  socket.end(serialise(response), () => socket.destroy());
}

/** A whole HTTP/1.1 response, for the one place that writes to the socket itself. */
function serialise(response: ApiResponse): Buffer {
  const body = typeof response.body === "string" ? Buffer.from(response.body) : response.body;
  let head = `HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? "Unknown"}\r\n`;
  for (const [name, value] of Object.entries(response.headers ?? {})) {
    if (name === "content-length" || name === "connection") continue;
    head += `${name}: ${value}\r\n`;
  }
  head += `content-length: ${body.length}\r\nconnection: close\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), body]);
}

function ignore(): void {}
