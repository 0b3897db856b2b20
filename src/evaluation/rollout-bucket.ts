/** The percentage-rollout hash of the reference evaluator: a rollout bucket from a filter key and a value. */
import { hash } from "node:crypto";

const LOW_20_BITS = 0xfffff;

/** The scale of rollout thresholds: 100000 is 100 %. */
export const ROLLOUT_SCALE = 100_000;

/**
 * The rollout bucket (0..100000) of a hash input `<filter key>.<attribute value>`: SHA-256 of its UTF-8 bytes, the
 * first four bytes as a little-endian uint32, its low 20 bits scaled to 0..100000. A filter is on iff
 * bucket < threshold.
 */
export function rolloutBucket(hashInput: string): number {
  // One-shot crypto.hash (Node ≥ 20.12) skips the Hash object createHash allocates, and a "binary" (latin1) digest (one char per
  // byte) costs less than a Buffer one (bench/evaluation/rollout-hash.ts): hashing dominates evaluation.
  const data = SURROGATE.test(hashInput) ? encodeLikeJsSha256(hashInput) : hashInput;
  const digest = hash("sha256", data, "binary");
  // The low 20 bits of the first four bytes read as a little-endian uint32: bytes 0, 1 and the low nibble of byte 2.
  return bucketOfLow20(digest.charCodeAt(0) | (digest.charCodeAt(1) << 8) | ((digest.charCodeAt(2) & 0x0f) << 16));
}

/** The bucket of a digest whose first four bytes, read as a little-endian uint32, have these low 20 bits. */
export function bucketOfLow20(low20: number): number {
  return Math.floor((low20 / LOW_20_BITS) * ROLLOUT_SCALE);
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The bytes the reference's js-sha256 hashes for a string holding surrogates. It joins every surrogate with the code
 * unit after it, paired or not (a lone one at the end with 0), where Node would write U+FFFD for a lone one. For
 * well-formed strings both give plain UTF-8, so this slow path only runs when a surrogate is present.
 */
export function encodeLikeJsSha256(text: string): Buffer {
  const bytes: number[] = [];
  for (let index = 0; index < text.length; index++) {
    let code = text.charCodeAt(index);
    if (code < 0x80) {
      bytes.push(code);
    } else if (code < 0x800) {
      bytes.push(0xc0 | (code >>> 6), 0x80 | (code & 0x3f));
    } else if (code < 0xd800 || code >= 0xe000) {
      bytes.push(0xe0 | (code >>> 12), 0x80 | ((code >>> 6) & 0x3f), 0x80 | (code & 0x3f));
    } else {
      // charCodeAt past the end is NaN, and NaN & 0x3ff is 0, as in js-sha256.
      code = 0x10000 + (((code & 0x3ff) << 10) | (text.charCodeAt(++index) & 0x3ff));
      bytes.push(0xf0 | (code >>> 18), 0x80 | ((code >>> 12) & 0x3f));
      bytes.push(0x80 | ((code >>> 6) & 0x3f), 0x80 | (code & 0x3f));
    }
  }
  return Buffer.from(bytes);
}

/** A bucket not computed yet, in a FieldBuckets row. */
export const UNKNOWN_BUCKET = -1;
