/**
 * The bytes of an OFREP bulk answer (API.md §14) and its ETag, from the outcomes' remembered text (ofrep-answer.ts):
 * written straight where the answer travels from, as the `/features/evaluated` writer does, with no string joined,
 * encoded or digested per request. Pure: no I/O.
 */
import type { AnswerTarget } from "./answer-writer.js";
import type { OfrepOutcome } from "./ofrep-answer.js";

const encoder = new TextEncoder();
const HEAD = encoder.encode('{"flags":[');
const COMMA = 0x2c;

/** What follows the flags for one caller's key, made once per key. */
interface Tail {
  /** `]`, the event stream a publishable key may open (`eventStreams`), and `}`. */
  bytes: Uint8Array;
  /** Two words standing for the key in the ETag (the stream it names is part of the answer). */
  words: readonly [number, number];
}

/** Publishable keys of a deployment are few; past this many the tails are made again (a clear, not an LRU). */
const MAX_TAILS = 1_024;
const tails = new Map<string, Tail>();
const NO_KEY: Tail = { bytes: encoder.encode("]}"), words: [0, 0] };

function tailOf(publishableKey: string | undefined): Tail {
  if (publishableKey === undefined) return NO_KEY;
  let tail = tails.get(publishableKey);
  if (tail === undefined) {
    if (tails.size >= MAX_TAILS) tails.clear();
    const uri = JSON.stringify(`/ofrep/v1/events?publishableKey=${encodeURIComponent(publishableKey)}`);
    const bytes = encoder.encode(`],"eventStreams":[{"type":"sse","endpoint":{"requestUri":${uri}}}]}`);
    let first = 0x811c9dc5;
    let second = 0x9747b28c;
    for (let index = 0; index < publishableKey.length; index++) {
      first = mix(first, publishableKey.charCodeAt(index), 0x01000193);
      second = mix(second, publishableKey.charCodeAt(index), 0x5bd1e995);
    }
    tails.set(publishableKey, (tail = { bytes, words: [first, second] }));
  }
  return tail;
}

/** One step of a two-lane multiplicative mix: a bijection of the lane for a given word, so one differing word always shows. */
function mix(lane: number, word: number, multiplier: number): number {
  const mixed = Math.imul(lane ^ word, multiplier);
  return (mixed ^ (mixed >>> 15)) >>> 0;
}

/**
 * The answer for `outcomes` (in answer order), with the event stream of `publishableKey`: a view of the room claimed
 * in `target` (the caller's batch arena), or of a buffer of its own without one.
 */
export function writeOfrepBulk(outcomes: readonly OfrepOutcome[], publishableKey: string | undefined, target: AnswerTarget | undefined): Uint8Array {
  const tail = tailOf(publishableKey).bytes;
  let total = HEAD.length + tail.length + Math.max(0, outcomes.length - 1);
  for (let index = 0; index < outcomes.length; index++) total += outcomes[index]!.bulkBytes.length;
  const start = target === undefined ? 0 : target.claim(total);
  const out = target === undefined ? new Uint8Array(total) : target.bytes;
  out.set(HEAD, start);
  let offset = start + HEAD.length;
  for (let index = 0; index < outcomes.length; index++) {
    if (index > 0) out[offset++] = COMMA;
    const bytes = outcomes[index]!.bulkBytes;
    out.set(bytes, offset);
    offset += bytes.length;
  }
  out.set(tail, offset);
  return out.subarray(start, start + total);
}

/**
 * The answer's ETag (two 32-bit words in decimal): mixed from what decides its bytes (the version, the caller's key, each flag's text by its
 * digest, their count), so it changes when the answer does, and costs a few multiplications per flag. Deterministic:
 * every thread and node gives one answer one ETag.
 */
export function ofrepEtag(flagStateVersion: number, publishableKey: string | undefined, outcomes: readonly OfrepOutcome[]): string {
  const key = tailOf(publishableKey).words;
  let first = mix(mix(0x811c9dc5, flagStateVersion, 0x01000193), key[0], 0x01000193);
  let second = mix(mix(0x9747b28c, flagStateVersion, 0x5bd1e995), key[1], 0x5bd1e995);
  for (let index = 0; index < outcomes.length; index++) {
    const words = outcomes[index]!.digestWords;
    first = mix(first, words[0], 0x01000193);
    second = mix(second, words[1], 0x5bd1e995);
  }
  first = mix(first, outcomes.length, 0x01000193);
  second = mix(second, outcomes.length, 0x5bd1e995);
  // Decimal: a number's decimal text is V8's fast conversion (hex padding was a tenth of this function's cost).
  return `"${first}-${second}"`;
}
