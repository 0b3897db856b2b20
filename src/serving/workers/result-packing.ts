/**
 * A batch's answers as one ArrayBuffer, moved (not copied) from a worker to the main thread: a large evaluation
 * answer cloned as an object costs the main thread more than writing it to the socket, and every result object, header
 * record and body is one more thing for the structured clone to walk.
 *
 * The answer writer writes each evaluation answer straight into the arena (the room claim() makes: no copy, no
 * per-answer allocation); the other answers are copied in when they are ready.
 *
 * Layout: u32 count, u32 bytes used, then per result a 15-byte entry (u16 status, u8 flags, u32 body offset,
 * u32 body length, u32 headers length — the headers' JSON, or an ETag's text, right after the body), then the bodies.
 */
import type { AnswerRing, RingRegion } from "./answer-ring.js";
import type { JobResult } from "../protocol.js";
import type { AnswerTarget } from "../../evaluation/index.js";

const JSON_CONTENT_TYPE = "application/json";
const FLAG_TEXT = 1;
const FLAG_OTHER_HEADERS = 2;
/** The headers are the JSON content type and an ETag, whose text follows the body (OFREP's bulk answers). */
const FLAG_ETAG = 4;
const HEADER_BYTES = 8;
const ENTRY_BYTES = 15;
const MIN_CAPACITY = 4 * 1024;

/**
 * Bytes per answer of recent batches: an arena starts at that size times its answers, so it is allocated once, not
 * grown by doubling; and the main thread sends buffers back with later batches (see pool-executor.ts), so in a steady load
 * none is allocated at all.
 */
let bytesPerAnswer = 1024;

const encoder = new TextEncoder();

/** UTF-8 text of bytes that may be shared memory (which TextDecoder refuses). */
function text(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
}
const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({ "content-type": JSON_CONTENT_TYPE });

interface HeaderShape {
  flag: number;
  etag?: string;
}
const USUAL: HeaderShape = { flag: 0 };
const OTHER: HeaderShape = { flag: FLAG_OTHER_HEADERS };

/** FLAG_ETAG with the ETag for JSON headers with one, 0 for the JSON content type alone, FLAG_OTHER_HEADERS else. */
function headerShape(headers: Record<string, string> | undefined): HeaderShape {
  if (headers === undefined) return OTHER;
  let count = 0;
  let etag: string | undefined;
  for (const name in headers) {
    count++;
    if (name === "etag") etag = headers[name];
    else if (name !== "content-type" || headers[name] !== JSON_CONTENT_TYPE) return OTHER;
  }
  if (etag !== undefined) return count === 2 ? { flag: FLAG_ETAG, etag } : OTHER;
  return count === 1 ? USUAL : OTHER;
}

/** Worker-local buffers of finished arenas whose bytes went through the ring: the next arenas write into them. */
const scratchBuffers: ArrayBuffer[] = [];
const MAX_SCRATCH_BUFFERS = 16;

/** The answers of one batch, collected in job order as they come (a later `set` of a position replaces the earlier). */
export class ResultArena implements AnswerTarget {
  /** The arena's buffer; an answer writer writes into the room claim() makes at its end. */
  bytes: Uint8Array;
  private view: DataView;
  private used: number;

  /** `reuse`: a buffer of an earlier batch, written over when it is large enough (else a scratch buffer of this thread). */
  constructor(
    private readonly count: number,
    reuse: ArrayBuffer | undefined = scratchBuffers.pop(),
  ) {
    this.used = HEADER_BYTES + count * ENTRY_BYTES;
    const wanted = Math.max(MIN_CAPACITY, Math.ceil(this.used + count * bytesPerAnswer * 1.25));
    // New buffers come in powers of two, so that a spare one fits the next batches of about the same size.
    this.bytes = reuse !== undefined && reuse.byteLength >= wanted ? new Uint8Array(reuse) : new Uint8Array(2 ** Math.ceil(Math.log2(wanted)));
    this.view = new DataView(this.bytes.buffer);
    this.view.setUint32(0, count);
  }

  /** Copies `result` in as the answer at `position` (its body may be a transient view: it is not kept). */
  set(position: number, result: JobResult): void {
    const text = typeof result.body === "string";
    const shape = headerShape(result.headers);
    const headers = shape.flag === FLAG_OTHER_HEADERS ? JSON.stringify(result.headers ?? {}) : shape.etag;
    const bodyOffset = this.used;
    const bodyLength = text ? this.writeText(result.body as string) : this.writeBytes(result.body as Uint8Array);
    const headersLength = headers === undefined ? 0 : this.writeText(headers);
    const entry = HEADER_BYTES + position * ENTRY_BYTES;
    this.view.setUint16(entry, result.status);
    this.view.setUint8(entry + 2, (text ? FLAG_TEXT : 0) | shape.flag);
    this.view.setUint32(entry + 3, bodyOffset);
    this.view.setUint32(entry + 7, bodyLength);
    this.view.setUint32(entry + 11, headersLength);
  }

  /**
   * Room for a body of `length` bytes where the next answer's body goes: a body written there and then passed to set()
   * is kept where it is, not copied again.
   */
  claim(length: number): number {
    this.reserve(length);
    return this.used;
  }

  /**
   * The packed answers, appended to `ring` when it has room (the arena's buffer is then kept for the next arena), or
   * the buffer itself, to be moved to the main thread. The arena is done with either way.
   */
  finish(ring?: AnswerRing, ringIndex = 0): ArrayBuffer | RingRegion {
    this.view.setUint32(4, this.used);
    const perAnswer = (this.used - HEADER_BYTES - this.count * ENTRY_BYTES) / Math.max(1, this.count);
    bytesPerAnswer = Math.max(64, bytesPerAnswer * 0.75 + perAnswer * 0.25);
    const region = ring?.append(ringIndex, this.bytes.subarray(0, this.used));
    if (region === undefined) return this.bytes.buffer as ArrayBuffer;
    if (scratchBuffers.length < MAX_SCRATCH_BUFFERS) scratchBuffers.push(this.bytes.buffer as ArrayBuffer);
    return region;
  }

  private writeBytes(body: Uint8Array): number {
    if (body.buffer === this.bytes.buffer && body.byteOffset === this.used && this.used + body.length <= this.bytes.length) {
      this.used += body.length;
      return body.length;
    }
    this.reserve(body.length);
    this.bytes.set(body, this.used);
    this.used += body.length;
    return body.length;
  }

  private writeText(text: string): number {
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    this.reserve(text.length * 3);
    const { written } = encoder.encodeInto(text, this.bytes.subarray(this.used));
    this.used += written;
    return written;
  }

  private reserve(length: number): void {
    if (this.used + length <= this.bytes.length) return;
    const grown = new Uint8Array(2 ** Math.ceil(Math.log2(Math.max(this.bytes.length * 2, this.used + length))));
    grown.set(this.bytes.subarray(0, this.used));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }
}

/**
 * The results packed by a ResultArena, from its buffer or from the ring region it was copied to: bodies are views of
 * those bytes (text bodies decoded back to strings, unless `textAsBytes`: answers that only go to a socket skip the
 * decoding here and the encoding again when written, and are valid only until the bytes are released).
 */
export function unpackResults(packed: ArrayBuffer | Uint8Array, textAsBytes = false): JobResult[] {
  const bytes = packed instanceof Uint8Array ? packed : new Uint8Array(packed);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const count = view.getUint32(0);
  const results = new Array<JobResult>(count);
  for (let index = 0; index < count; index++) {
    const entry = HEADER_BYTES + index * ENTRY_BYTES;
    const status = view.getUint16(entry);
    const flags = view.getUint8(entry + 2);
    const offset = view.getUint32(entry + 3);
    const length = view.getUint32(entry + 7);
    const headersLength = view.getUint32(entry + 11);
    const body = bytes.subarray(offset, offset + length);
    // The headers' bytes are only looked at when there are any (a view per answer is an allocation on this thread).
    const headers =
      (flags & (FLAG_OTHER_HEADERS | FLAG_ETAG)) === 0
        ? JSON_HEADERS
        : (flags & FLAG_ETAG) !== 0
          ? { "content-type": JSON_CONTENT_TYPE, etag: text(bytes.subarray(offset + length, offset + length + headersLength)) }
          : (JSON.parse(text(bytes.subarray(offset + length, offset + length + headersLength))) as Record<string, string>);
    results[index] = { status, headers, body: (flags & FLAG_TEXT) !== 0 && !textAsBytes ? text(body) : body };
  }
  return results;
}
