/**
 * The HTTP seam: the transport-free request and response the API core speaks. The uWebSockets.js front end
 * (`src/http/`) and the node:http one (`native-free/http/`) translate to and from these and nothing else.
 */

/** What a front end hands the core. Header names are lower-case. */
export interface ApiRequest {
  method: string;
  /** Path without the query string, URL-decoded per segment by the router, not here. */
  path: string;
  /** Raw query string without the leading `?`. */
  query: string;
  headers: Readonly<Record<string, string>>;
  /** The body, present for routes that read one. */
  body: Buffer | null;
  /**
   * The client address, read on demand: uWebSockets.js asks the kernel for it (a syscall) on every call, which costs
   * as much as a fifth of a small request, and only the per-address rate limit needs it.
   */
  remoteAddress(): string;
}

export interface ApiResponse {
  status: number;
  headers?: Record<string, string>;
  /** JSON text or bytes; empty string for no body. */
  body: string | Uint8Array;
  /**
   * The body's bytes are a view of a buffer the next evaluation reuses: a front end must have written or copied them
   * by the time it returns from writing the response.
   */
  transient?: boolean;
}

/** A long-lived response (Server-Sent Events). */
export interface StreamSink {
  /** Writes a chunk; false when the client is not keeping up (the stream should then be dropped). */
  write(chunk: string | Uint8Array): boolean;
  end(): void;
  /** Called once when the client goes away or the stream is ended. */
  onClose(listener: () => void): void;
}

export interface StreamResponse {
  status: number;
  headers: Record<string, string>;
  /**
   * Non-empty bytes sent together with the headers (an SSE comment, say). uWebSockets.js cannot send a header section
   * before the first body bytes, and stream clients wait for the headers before they treat the stream as open.
   */
  preamble: string;
  /** Called after the headers are sent. */
  start(sink: StreamSink): void;
}

/**
 * How a front end learns, before reading the body, what a request needs. `bodyLimit` 0 means the body is ignored.
 * `handle` resolves with a plain response or a stream.
 */
export interface RouteDecision {
  bodyLimit: number;
  handle(request: ApiRequest): Promise<ApiResponse | StreamResponse> | ApiResponse | StreamResponse;
  /** The route's own answer to a body over its limit (a protocol with its own error body); the core's otherwise. */
  refuseTooLarge?(request: Pick<ApiRequest, "headers" | "method">): ApiResponse;
}

/** The core the front ends serve. */
export interface ApiCore {
  /** Picks the route; never throws. Unknown routes get a decision whose handler answers 404. */
  decide(method: string, path: string): RouteDecision;
  /** An answer for a request rejected before the core saw it (body over the limit, aborted read…). */
  reject(code: "PAYLOAD_TOO_LARGE" | "URI_TOO_LONG" | "INVALID_REQUEST", request: Pick<ApiRequest, "headers" | "method">): ApiResponse;
}

export function isStreamResponse(response: ApiResponse | StreamResponse): response is StreamResponse {
  return typeof (response as StreamResponse).start === "function";
}

/** The front-end seam implemented by `src/http/uws-front-end.ts` and `native-free/http/node-front-end.ts`. */
export interface FrontEnd {
  readonly kind: "uws" | "node-http";
  /** Starts listening; resolves with the bound port (port 0 picks a free one). */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting connections. */
  stopListening(): void;
  /** Closes every open connection (after draining). */
  closeAll(): void;
  /** Requests being handled right now. */
  inFlight(): number;
}

export interface FrontEndLimits {
  /** Largest request header section / URL accepted. */
  maxUrlLength: number;
  /** Seconds a connection may stay idle before it is closed. */
  idleTimeoutSeconds: number;
  /** How long the rest of an over-limit body may take to arrive before its 413 (over-limit-body.ts); tests shorten it. */
  overLimitDrainMs?: number;
}
