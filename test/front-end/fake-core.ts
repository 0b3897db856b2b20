import { ERRORS } from "../../src/errors/catalogue.js";
import type { ApiCore, ApiRequest, ApiResponse, RouteDecision, StreamSink } from "../../src/http/types.js";

/** A small ApiCore with one route per front-end behaviour under test, and hooks to steer and observe them. */
export interface FakeCore extends ApiCore {
  /** Releases every request parked on /async. */
  releaseAsync(): void;
  /** Sinks of the /stream-open streams, in the order they started. */
  readonly openStreams: StreamSink[];
  /** How many times a stream's onClose listener has run. */
  streamCloses: number;
}

export const ECHO_BODY_LIMIT = 1024;
export const LIMITED_BODY_LIMIT = 10;
export const BINARY_BODY = Uint8Array.from({ length: 256 }, (_, i) => i);

/** What every fake stream sends with its headers. */
export const STREAM_PREAMBLE = ": open\n\n";

function json(status: number, body: unknown, headers: Record<string, string> = {}): ApiResponse {
  return { status, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) };
}

function echo(request: ApiRequest): ApiResponse {
  return json(
    200,
    {
      method: request.method,
      path: request.path,
      query: request.query,
      headers: request.headers,
      bodyLength: request.body === null ? null : request.body.length,
      bodyText: request.body === null ? null : request.body.toString(),
      remoteAddress: request.remoteAddress(),
    },
    { "x-served-by": "fake-core" },
  );
}

export function createFakeCore(): FakeCore {
  const parked: (() => void)[] = [];
  const core: FakeCore = {
    openStreams: [],
    streamCloses: 0,
    releaseAsync() {
      for (const release of parked.splice(0)) release();
    },
    decide(method, path): RouteDecision {
      if (path.startsWith("/echo")) return { bodyLimit: ECHO_BODY_LIMIT, handle: echo };
      switch (path) {
        case "/limited":
          return { bodyLimit: LIMITED_BODY_LIMIT, handle: (request) => json(200, { bodyLength: request.body?.length ?? null }) };
        case "/no-body":
          return { bodyLimit: 0, handle: (request) => json(200, { bodyIsNull: request.body === null }) };
        case "/throw":
          return {
            bodyLimit: 0,
            handle: () => {
              throw new Error("handler failed");
            },
          };
        case "/reject":
          return { bodyLimit: 0, handle: () => Promise.reject(new Error("handler failed later")) };
        case "/async":
          return { bodyLimit: 0, handle: () => new Promise((resolve) => parked.push(() => resolve(json(200, { waited: true })))) };
        case "/binary":
          return { bodyLimit: 0, handle: () => ({ status: 200, headers: { "content-type": "application/octet-stream" }, body: BINARY_BODY }) };
        case "/stream":
          return {
            bodyLimit: 0,
            handle: () => ({
              status: 200,
              headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
              preamble: STREAM_PREAMBLE,
              start(sink) {
                sink.onClose(() => core.streamCloses++);
                let n = 0;
                // Events spread over several turns, so order is tested across separate writes.
                const next = (): void => {
                  n++;
                  sink.write(`data: ${n}\n\n`);
                  if (n < 3) setTimeout(next, 5);
                  else sink.end();
                };
                next();
              },
            }),
          };
        case "/stream-open":
          return {
            bodyLimit: 0,
            handle: () => ({
              status: 200,
              headers: { "content-type": "text/event-stream" },
              preamble: STREAM_PREAMBLE,
              start(sink) {
                core.openStreams.push(sink);
                sink.onClose(() => core.streamCloses++);
              },
            }),
          };
        default:
          return { bodyLimit: 0, handle: () => json(404, { success: false, error: { code: "ROUTE_NOT_FOUND", message: `No route for ${method} ${path}.` } }) };
      }
    },
    reject(code) {
      return json(ERRORS[code].status, { success: false, error: { code, message: ERRORS[code].message } });
    },
  };
  return core;
}
