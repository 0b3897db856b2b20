/**
 * A batch's answers as one ArrayBuffer, moved (not copied) from a worker to the main thread: a 15 KB evaluation
 * answer cloned as an object cost the main thread more than writing it to the socket, and every result object, header
 * record and body is one more thing for the structured clone to walk.
 *
 * Layout: u32 count, then per result u16 status, u8 flags, u32 body length, [u32 headers length], then the bodies
 * (and the JSON text of any headers but the usual JSON content type), in order.
 */
import type { JobResult } from "./protocol.js";

const JSON_CONTENT_TYPE = "application/json";
const FLAG_TEXT = 1;
const FLAG_OTHER_HEADERS = 2;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "content-type": JSON_CONTENT_TYPE });

function usualHeaders(headers: Record<string, string> | undefined): boolean {
  if (headers === undefined) return false;
  let count = 0;
  for (const name in headers) {
    count++;
    if (name !== "content-type" || headers[name] !== JSON_CONTENT_TYPE) return false;
  }
  return count === 1;
}

/** Packs results into one buffer (to be transferred). */
export function packResults(results: readonly JobResult[]): ArrayBuffer {
  const bodies: Uint8Array[] = [];
  const extraHeaders: (Uint8Array | undefined)[] = [];
  let size = 4;
  for (const result of results) {
    const body = typeof result.body === "string" ? encoder.encode(result.body) : result.body;
    const headers = usualHeaders(result.headers) ? undefined : encoder.encode(JSON.stringify(result.headers ?? {}));
    bodies.push(body);
    extraHeaders.push(headers);
    size += 7 + body.length + (headers === undefined ? 0 : 4 + headers.length);
  }
  const buffer = new ArrayBuffer(size);
  const view = new DataView(buffer);
  const bytes = new Uint8Array(buffer);
  view.setUint32(0, results.length);
  let offset = 4;
  results.forEach((result, index) => {
    const body = bodies[index]!;
    const headers = extraHeaders[index];
    view.setUint16(offset, result.status);
    view.setUint8(offset + 2, (typeof result.body === "string" ? FLAG_TEXT : 0) | (headers === undefined ? 0 : FLAG_OTHER_HEADERS));
    view.setUint32(offset + 3, body.length);
    offset += 7;
    if (headers !== undefined) {
      view.setUint32(offset, headers.length);
      offset += 4;
      bytes.set(headers, offset);
      offset += headers.length;
    }
    bytes.set(body, offset);
    offset += body.length;
  });
  return buffer;
}

/** The results packed by packResults: bodies are views of `buffer` (text bodies decoded back to strings). */
export function unpackResults(buffer: ArrayBuffer): JobResult[] {
  const view = new DataView(buffer);
  const count = view.getUint32(0);
  const results = new Array<JobResult>(count);
  let offset = 4;
  for (let index = 0; index < count; index++) {
    const status = view.getUint16(offset);
    const flags = view.getUint8(offset + 2);
    const length = view.getUint32(offset + 3);
    offset += 7;
    let headers: Record<string, string> = JSON_HEADERS;
    if ((flags & FLAG_OTHER_HEADERS) !== 0) {
      const headersLength = view.getUint32(offset);
      offset += 4;
      headers = JSON.parse(decoder.decode(new Uint8Array(buffer, offset, headersLength))) as Record<string, string>;
      offset += headersLength;
    }
    const body = new Uint8Array(buffer, offset, length);
    offset += length;
    results[index] = { status, headers, body: (flags & FLAG_TEXT) !== 0 ? decoder.decode(body) : body };
  }
  return results;
}
