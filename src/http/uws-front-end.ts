import { STATUS_CODES } from "node:http";
import type { HttpRequest, HttpResponse, us_listen_socket } from "uWebSockets.js";
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
} from "./types.js";
import { payloadTooLarge, runDecision } from "./run-decision.js";
import { drainBound, drainsDeclaredLength, drainTime } from "./over-limit-body.js";
import { loadNativeUws, type UwsModule } from "./load-uws.js";


/** Per-response state; uWebSockets.js responses are only valid until answered or aborted. */
interface Exchange {
  res: HttpResponse;
  aborted: boolean;
  done: boolean;
  /** A HEAD request: the answer's headers only (a body would be read as the start of the next response). */
  head: boolean;
  /** Called once when the exchange stops counting as in flight (answered or aborted). */
  settle: () => void;
  /** Whether an abort handler is attached (only answers given after the handler returns need one). */
  watched: boolean;
}

function statusLine(status: number): string {
  return `${status} ${STATUS_CODES[status] ?? "Unknown"}`;
}

/** Writes an answer; uWebSockets.js copies what it cannot send at once, so a transient body is safe here. */
function writeResponse(exchange: Exchange, response: ApiResponse, closeConnection = false): void {
  if (exchange.aborted || exchange.done) return;
  exchange.done = true;
  exchange.settle();
  const { res } = exchange;
  res.cork(() => {
    // uWebSockets.js sends 200 OK unless told otherwise.
    if (response.status !== 200) res.writeStatus(statusLine(response.status));
    if (response.headers) for (const name in response.headers) res.writeHeader(name, response.headers[name]!);
    // uWebSockets.js closes without saying so; the header tells the client not to send its next request here.
    if (closeConnection) res.writeHeader("connection", "close");
    if (exchange.head) {
      // endWithoutBody(length) aborts the connection in this uWebSockets.js build; the header written by hand works.
      // No HEAD request carries a body we would need to cut off, so the connection is kept either way.
      res.writeHeader("content-length", String(byteLength(response.body)));
      res.endWithoutBody();
    } else res.end(response.body, closeConnection);
  });
}

function byteLength(body: string | Uint8Array): number {
  return typeof body === "string" ? Buffer.byteLength(body) : body.byteLength;
}

/**
 * Collects one request body up to its limit. Past the limit it keeps reading and discards the rest, then refuses
 * (413, connection closed): uWebSockets.js cuts a connection closed mid-body, and a client still writing would get
 * EPIPE instead of the answer. Past the drain bound (bytes or time) it refuses at once (over-limit-body.ts).
 */
class BodyReader {
  private chunks: Buffer[] = [];
  private received = 0;
  private timer: NodeJS.Timeout | undefined;
  private refused = false;

  constructor(
    private readonly limit: number,
    private readonly drainMs: number,
    draining: boolean,
    private readonly refuse: () => void,
  ) {
    if (draining) this.startDraining();
  }

  /** Adds a chunk; returns the whole body once its last chunk is in and within the limit. */
  take(chunk: ArrayBuffer, isLast: boolean): Buffer | undefined {
    if (this.refused) return undefined;
    this.received += chunk.byteLength;
    if (this.timer === undefined && this.received > this.limit) this.startDraining();
    if (this.timer !== undefined) {
      if (isLast || this.received > drainBound(this.limit)) this.refuseNow();
      return undefined;
    }
    // uWebSockets.js reuses the chunk's memory after this callback returns: copy it.
    this.chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast) return undefined;
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.received);
  }

  /** The exchange ended without us: no refusal left to send. */
  stop(): void {
    clearTimeout(this.timer);
    this.refused = true;
  }

  private startDraining(): void {
    this.chunks = [];
    this.timer = setTimeout(() => this.refuseNow(), this.drainMs);
  }

  private refuseNow(): void {
    if (this.refused) return;
    this.stop();
    this.refuse();
  }
}

/** The uWebSockets.js front end: HTTP only; every decision is the core's. */
export function createUwsFrontEnd(core: ApiCore, limits: FrontEndLimits, uws: UwsModule = loadNativeUws()): FrontEnd {
  const app = uws.App();
  let listenSocket: us_listen_socket | null = null;
  let inFlight = 0;
  const streams = new Set<HttpResponse>();

  function finish(exchange: Exchange, response: ApiResponse | StreamResponse): void {
    if (isStreamResponse(response)) startStream(exchange, response);
    else writeResponse(exchange, response);
  }

  function startStream(exchange: Exchange, response: StreamResponse): void {
    if (exchange.aborted || exchange.done) return;
    exchange.done = true;
    exchange.settle();
    const { res } = exchange;
    const closeListeners: (() => void)[] = [];
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      streams.delete(res);
      for (const listener of closeListeners) listener();
    };
    streams.add(res);
    res.onAborted(close);
    const sink: StreamSink = {
      write(chunk) {
        if (closed) return false;
        let accepted = false;
        res.cork(() => {
          accepted = res.write(chunk);
        });
        return accepted;
      },
      end() {
        if (closed) return;
        res.cork(() => res.end());
        close();
      },
      onClose(listener) {
        closeListeners.push(listener);
      },
    };
    res.cork(() => {
      res.writeStatus(statusLine(response.status));
      for (const name in response.headers) res.writeHeader(name, response.headers[name]!);
      // The headers leave with the first body bytes; the preamble makes that now.
      res.write(response.preamble);
    });
    response.start(sink);
  }

  function dispatch(exchange: Exchange, request: ApiRequest, decision: RouteDecision): void {
    runDecision(decision, request, (response) => finish(exchange, response));
  }

  /** Attaches the abort handler an answer given later needs; an answer given at once (a remembered one) skips it. */
  function watchAbort(exchange: Exchange): void {
    if (exchange.watched || exchange.done) return;
    exchange.watched = true;
    exchange.res.onAborted(() => {
      exchange.aborted = true;
      exchange.settle();
    });
  }


  app.any("/*", (res: HttpResponse, req: HttpRequest) => {
    let settled = false;
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const exchange: Exchange = {
      res,
      aborted: false,
      done: false,
      head: method === "HEAD",
      settle: () => {
        if (settled) return;
        settled = true;
        inFlight--;
      },
      watched: false,
    };
    inFlight++;
    const path = req.getUrl();
    const query = req.getQuery() ?? "";
    // No prototype: a header named `constructor` or `__proto__` must not meet inherited members.
    const headers: Record<string, string> = Object.create(null);
    req.forEach((name, value) => {
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    });
    let remoteAddress: string | undefined;
    // Asked only while the response is still ours: uWebSockets.js throws on an answered or aborted one.
    const readRemoteAddress = () => (remoteAddress ??= exchange.aborted || exchange.done ? "" : Buffer.from(res.getRemoteAddressAsText()).toString());

    if (path.length + query.length > limits.maxUrlLength) {
      writeResponse(exchange, core.reject("URI_TOO_LONG", { headers, method }), true);
      return;
    }
    const decision = core.decide(method, path);
    const request: ApiRequest = { method, path, query, headers, body: null, remoteAddress: readRemoteAddress };
    const contentLength = headers["content-length"];
    const hasBody = contentLength !== undefined ? contentLength !== "0" : headers["transfer-encoding"] !== undefined;
    if (decision.bodyLimit === 0 || !hasBody) {
      if (hasBody) {
        watchAbort(exchange);
        res.onData(() => {});
      }
      dispatch(exchange, request, decision);
      watchAbort(exchange);
      return;
    }
    watchAbort(exchange);
    const declaredOver = contentLength !== undefined && Number(contentLength) > decision.bodyLimit;
    if (declaredOver && !drainsDeclaredLength(Number(contentLength), decision.bodyLimit)) {
      // Past the drain bound: uWebSockets.js cuts the connection, so a client still writing may see a reset instead.
      writeResponse(exchange, payloadTooLarge(core, decision, request), true);
      return;
    }
    const body = new BodyReader(decision.bodyLimit, drainTime(limits), declaredOver, () => writeResponse(exchange, payloadTooLarge(core, decision, request), true));
    // One handler for the request's life: uWebSockets.js must not have it replaced from inside itself.
    res.onData((chunk, isLast) => {
      if (exchange.aborted || exchange.done) return body.stop();
      const whole = body.take(chunk, isLast);
      if (whole) {
        request.body = whole;
        dispatch(exchange, request, decision);
      }
    });
  });

  return {
    kind: "uws",
    listen(host, port) {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket) => {
          if (!socket) {
            reject(new Error(`Cannot listen on ${host}:${port}`));
            return;
          }
          listenSocket = socket;
          resolve(uws.us_socket_local_port(socket));
        });
      });
    },
    stopListening() {
      if (listenSocket) uws.us_listen_socket_close(listenSocket);
      listenSocket = null;
    },
    closeAll() {
      for (const res of [...streams]) res.close();
    },
    inFlight: () => inFlight,
  };
}
