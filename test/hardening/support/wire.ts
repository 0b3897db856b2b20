/**
 * Wire-level helpers for the hardening suites: raw sockets (for bytes no HTTP client would send: chunked, truncated,
 * bad UTF-8, trickled), a fetch wrapper that gives up on streams once their headers are in, and the one check every
 * answer is held to (API.md §2).
 */
import net from "node:net";

/** Every status the service may answer with (issue 8); 500 and up never. */
export const DOCUMENTED_STATUSES: ReadonlySet<number> = new Set([200, 204, 304, 400, 401, 403, 404, 413, 414, 429, 431, 503]);

export interface WireAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What came back on a raw socket. */
export type RawOutcome =
  | ({ kind: "answered"; afterMs: number } & WireAnswer)
  /** The server closed (or reset) the connection without a status line: the transport refused the bytes. */
  | { kind: "closed"; afterMs: number }
  /** Nothing came back within the wait, and the connection is still open. */
  | { kind: "silent"; afterMs: number };

export interface RawPart {
  data: string | Buffer;
  /** Wait this long before writing the part. */
  delayMs?: number;
}

function parseHead(buffer: Buffer): { status: number; headers: Record<string, string>; headerEnd: number } | undefined {
  const headerEnd = buffer.indexOf("\r\n\r\n");
  if (headerEnd < 0) return undefined;
  const lines = buffer.subarray(0, headerEnd).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "")?.[1] ?? Number.NaN);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, headerEnd };
}

/** Parses one HTTP/1.1 response from the start of `buffer`; undefined while incomplete. */
export function parseResponse(buffer: Buffer): WireAnswer | undefined {
  const head = parseHead(buffer);
  if (!head) return undefined;
  const { status, headers, headerEnd } = head;
  const rest = buffer.subarray(headerEnd + 4);
  // A stream's body never ends: its headers are the answer.
  if ((headers["content-type"] ?? "").startsWith("text/event-stream")) return { status, headers, body: "" };
  if (headers["content-length"] !== undefined) {
    const length = Number(headers["content-length"]);
    if (rest.length < length) return undefined;
    return { status, headers, body: rest.subarray(0, length).toString("utf8") };
  }
  if ((headers["transfer-encoding"] ?? "").toLowerCase() === "chunked") {
    const chunks: Buffer[] = [];
    let offset = 0;
    for (;;) {
      const lineEnd = rest.indexOf("\r\n", offset);
      if (lineEnd < 0) return undefined;
      const size = Number.parseInt(rest.subarray(offset, lineEnd).toString("latin1"), 16);
      if (size === 0) return { status, headers, body: Buffer.concat(chunks).toString("utf8") };
      if (rest.length < lineEnd + 2 + size + 2) return undefined;
      chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      offset = lineEnd + 2 + size + 2;
    }
  }
  // No length: 1xx/204/304 have no body; otherwise the body runs to the close, which the caller handles.
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) return { status, headers, body: "" };
  return undefined;
}

/**
 * Writes `parts` to a fresh connection and resolves with the first complete response, with `closed` when the
 * server hangs up without one, or with `silent` after `waitMs`. The socket is destroyed either way.
 */
export function sendRaw(port: number, parts: string | Buffer | RawPart[], waitMs = 2_000, host = "127.0.0.1"): Promise<RawOutcome> {
  const list: RawPart[] = typeof parts === "string" || Buffer.isBuffer(parts) ? [{ data: parts }] : parts;
  return new Promise((resolve) => {
    const startedAt = Date.now();
    const socket = net.connect(port, host);
    let received = Buffer.alloc(0);
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const answer = parseResponse(received);
      if (answer) finish({ kind: "answered", afterMs: Date.now() - startedAt, ...answer });
    });
    socket.on("error", () => {});
    socket.on("close", () => {
      // A body delimited by the close.
      const head = parseHead(received);
      if (head) finish({ kind: "answered", afterMs: Date.now() - startedAt, ...head, body: received.subarray(head.headerEnd + 4).toString("utf8") });
      else finish({ kind: "closed", afterMs: Date.now() - startedAt });
    });
    socket.once("connect", () => {
      let at = 0;
      for (const part of list) {
        at += part.delayMs ?? 0;
        timers.push(
          setTimeout(() => {
            if (!settled && socket.writable) socket.write(part.data);
          }, at),
        );
      }
      timers.push(setTimeout(() => finish({ kind: "silent", afterMs: Date.now() - startedAt }), at + waitMs));
    });
  });
}

/** Writes `payload` and collects every byte the server sends within `waitMs` (for pipelined answers). */
export function readAll(port: number, payload: string | Buffer, waitMs = 500, host = "127.0.0.1"): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, host);
    let received = "";
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
    });
    socket.on("error", () => {});
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.write(payload);
  });
}

export interface FetchSpec {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** One request through fetch; a stream is abandoned once its headers are in. Network errors reject. */
export async function exchange(baseUrl: string, spec: FetchSpec, timeoutMs = 15_000): Promise<WireAnswer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
  try {
    const response = await fetch(baseUrl + spec.path, {
      method: spec.method,
      headers: spec.headers,
      body: spec.method === "GET" || spec.method === "HEAD" ? undefined : spec.body,
      signal: controller.signal,
    });
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    if ((headers["content-type"] ?? "").startsWith("text/event-stream")) {
      controller.abort();
      return { status: response.status, headers, body: "" };
    }
    return { status: response.status, headers, body: await response.text() };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What is wrong with an answer, by API.md §2: a documented status, never ≥ 500; every non-2xx answer (but 304) the
 * JSON error envelope; 2xx answers JSON (or a stream, or 204/304 with no body; HEAD: never a body). Empty when all
 * is well.
 */
export function problemsWith(answer: WireAnswer, head = false, ofrep = false): string[] {
  const problems: string[] = [];
  const { status, body } = answer;
  if (status >= 500) problems.push(`status ${status} (≥ 500)`);
  else if (!DOCUMENTED_STATUSES.has(status)) problems.push(`undocumented status ${status}`);
  // The answer to HEAD is the answer to GET without its body.
  if (head) {
    if (body !== "") problems.push("HEAD answered with a body");
    return problems;
  }
  const contentType = answer.headers["content-type"] ?? "";
  if (status === 204 || status === 304) {
    if (body !== "") problems.push(`${status} with a body`);
    return problems;
  }
  if (contentType.startsWith("text/event-stream")) {
    if (status !== 200) problems.push(`stream with status ${status}`);
    return problems;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    problems.push(`non-JSON body: ${JSON.stringify(body.slice(0, 120))}`);
    return problems;
  }
  if (status >= 300) {
    const envelope = parsed as { success?: unknown; error?: { code?: unknown; message?: unknown } };
    // OFREP answers its own error body (API.md §14); its path's other refusals (404 route, 413) use the envelope.
    const ofrepBody = parsed as { errorCode?: unknown; errorDetails?: unknown };
    if (ofrep && typeof parsed === "object" && parsed !== null && typeof ofrepBody.errorCode === "string" && typeof ofrepBody.errorDetails === "string") return problems;
    if (
      typeof parsed !== "object" || parsed === null || envelope.success !== false || typeof envelope.error !== "object" ||
      envelope.error === null || typeof envelope.error.code !== "string" || typeof envelope.error.message !== "string"
    ) {
      problems.push(`not the error envelope: ${body.slice(0, 160)}`);
    }
  }
  return problems;
}

/** Percentile (0..100) of a list of numbers, nearest-rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
