/**
 * Compression of large evaluation answers (API.md §3 answers grow ~300 bytes per feature). Brotli at quality 1 is
 * both the fastest and among the smallest on these repetitive JSON answers (gzip level 1 is slower for a larger
 * result), so it is preferred when the
 * client accepts it, gzip otherwise. Answers below the configured size are sent as they are: the CPU a compression
 * costs is worth it only when the bytes saved are many (docs/BENCHMARKS.md, "Compression").
 */
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

export type AnswerEncoding = "br" | "gzip";

let lastHeader: string | undefined;
let lastEncoding: AnswerEncoding | undefined;

/** The encoding to use for a client's `Accept-Encoding`, or undefined for none (q=0 refuses a coding). */
export function preferredEncoding(acceptEncoding: string | undefined): AnswerEncoding | undefined {
  if (acceptEncoding === undefined || acceptEncoding === "") return undefined;
  // Clients of one kind send the same header every time: the last one's answer is kept.
  if (acceptEncoding === lastHeader) return lastEncoding;
  lastEncoding = parseAcceptEncoding(acceptEncoding);
  lastHeader = acceptEncoding;
  return lastEncoding;
}

function parseAcceptEncoding(acceptEncoding: string): AnswerEncoding | undefined {
  let gzip = false;
  let wildcard = false;
  for (const part of acceptEncoding.split(",")) {
    const [coding = "", ...parameters] = part.split(";");
    const name = coding.trim().toLowerCase();
    const quality = parameters.map((parameter) => parameter.trim()).find((parameter) => parameter.toLowerCase().startsWith("q="));
    const accepted = quality === undefined || Number(quality.slice(2)) > 0;
    if (!accepted) continue;
    if (name === "br") return "br";
    if (name === "gzip" || name === "x-gzip") gzip = true;
    if (name === "*") wildcard = true;
  }
  return gzip || wildcard ? "gzip" : undefined;
}

/** The body compressed with `encoding`. */
export function compressAnswer(body: Uint8Array, encoding: AnswerEncoding): Buffer {
  if (encoding === "gzip") return gzipSync(body, { level: 1 });
  return brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 1,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  });
}
