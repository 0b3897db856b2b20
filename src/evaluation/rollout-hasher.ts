/**
 * The rollout bucket of one rollout key for many attribute values, computed in JavaScript: SHA-256 of
 * `<key>.<value>` for inputs that fit one 64-byte block (55 bytes or fewer) and whose value is ASCII — user and
 * company ids almost always are. Anything else goes to rolloutBucket (node:crypto).
 *
 * Why not node:crypto every time: a call costs ~0.3 µs alone, and on the evaluation path ~0.7 µs with the string
 * concatenation it needs, the flattening of that string, the surrogate check and the binding's argument handling
 * (CPU profile of GET /features/evaluated, 50 features, distinct contexts). Here the key's bytes are laid into the
 * message words once, the rounds that read only those words are run once, and a value costs one compression.
 */
import { encodeLikeJsSha256, ROLLOUT_SCALE, rolloutBucket } from "./rollout-hash.js";
import { ChunkedViews } from "./chunked-views.js";
import { SHA256_ROUND_CONSTANTS } from "./sha256-constants.js";
import { input as laneWords, LANES } from "./sha256x4.js";

const K = Int32Array.from(SHA256_ROUND_CONSTANTS);
const IV = Int32Array.from([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/** The longest message one block holds: 64 bytes less the 0x80 marker and the 8-byte length. */
const ONE_BLOCK_BYTES = 55;
const LOW_20_BITS = 0xfffff;

/** The message schedule, shared: evaluation is synchronous. */
const schedule = new Int32Array(64);

/**
 * The prefix words of hashers come from shared chunks, in the order hashers are made (a ruleset's rollouts in
 * compilation order), so that the prefixes a batched hash copies one after another lie side by side in memory. Each in
 * a 64-byte array of its own, their first reads missed the caches: at 1,000 features the prefix copy in fillLane was
 * 7.3 % of an in-process evaluation's samples, and 5.2 % with the chunks.
 */
const prefixChunks = new ChunkedViews(() => new Int32Array(16 * 4_096));

function newPrefixWords(): Int32Array {
  prefixChunks.room(16);
  return prefixChunks.take(16);
}

export class RolloutHasher {
  private readonly prefixWords = newPrefixWords();
  private readonly prefixLength: number;
  /** Rounds whose message word is the prefix's alone, run once here. */
  private readonly fixedRounds: number;
  private readonly stateAfterFixed = new Int32Array(8);

  /** `prefix` is `<rollout key>.`, the hash input before the value. */
  constructor(private readonly prefix: string) {
    const bytes = encodeLikeJsSha256(prefix);
    this.prefixLength = bytes.length;
    for (let index = 0; index < Math.min(bytes.length, ONE_BLOCK_BYTES); index++) this.prefixWords[index >> 2]! |= bytes[index]! << (24 - (index & 3) * 8);
    this.fixedRounds = Math.min(bytes.length, ONE_BLOCK_BYTES) >> 2;
    this.stateAfterFixed.set(IV);
    compressRounds(this.stateAfterFixed, this.prefixWords, 0, this.fixedRounds);
  }

  /**
   * Writes the message of `<prefix><value>` into lane `lane` of sha256x4's input, and answers true; false (nothing
   * written) when it does not fit one block or the value is not ASCII — bucket() handles those.
   */
  fillLane(value: string, lane: number): boolean {
    const prefixLength = this.prefixLength;
    const length = prefixLength + value.length;
    if (length > ONE_BLOCK_BYTES) return false;
    for (let index = 0; index < value.length; index++) if (value.charCodeAt(index) > 0x7f) return false;
    const prefixWords = this.prefixWords;
    for (let index = 0; index < 16; index++) laneWords[index * LANES + lane] = prefixWords[index]!;
    for (let index = 0; index < value.length; index++) {
      const position = prefixLength + index;
      laneWords[(position >> 2) * LANES + lane]! |= value.charCodeAt(index) << (24 - (position & 3) * 8);
    }
    laneWords[(length >> 2) * LANES + lane]! |= 0x80 << (24 - (length & 3) * 8);
    laneWords[15 * LANES + lane] = length * 8;
    return true;
  }

  /** The bucket (0..100000) of `<prefix><value>`, equal to rolloutBucket's. */
  bucket(value: string): number {
    const prefixLength = this.prefixLength;
    const length = prefixLength + value.length;
    if (length > ONE_BLOCK_BYTES) return rolloutBucket(this.prefix + value);
    const words = schedule;
    const prefixWords = this.prefixWords;
    // A loop, not words.set(): TypedArray#set costs ~130 ns a call here, a third of the whole hash.
    for (let index = 0; index < 16; index++) words[index] = prefixWords[index]!;
    for (let index = 0; index < value.length; index++) {
      const code = value.charCodeAt(index);
      if (code > 0x7f) return rolloutBucket(this.prefix + value);
      const position = prefixLength + index;
      words[position >> 2]! |= code << (24 - (position & 3) * 8);
    }
    words[length >> 2]! |= 0x80 << (24 - (length & 3) * 8);
    words[15] = length * 8;
    for (let round = 16; round < 64; round++) {
      const w15 = words[round - 15]!;
      const w2 = words[round - 2]!;
      const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
      const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
      words[round] = (words[round - 16]! + s0 + words[round - 7]! + s1) | 0;
    }
    const state = this.stateAfterFixed;
    let a = state[0]!;
    let b = state[1]!;
    let c = state[2]!;
    let d = state[3]!;
    let e = state[4]!;
    let f = state[5]!;
    let g = state[6]!;
    let h = state[7]!;
    for (let round = this.fixedRounds; round < 64; round++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[round]! + words[round]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    return bucketOfFirstWord((a + IV[0]!) | 0);
  }
}

/** The rollout bucket of a digest whose first (big-endian) word is `first`: its first bytes read little-endian. */
export function bucketOfFirstWord(first: number): number {
  const low20 = ((first >>> 24) & 0xff) | (((first >>> 16) & 0xff) << 8) | (((first >>> 8) & 0x0f) << 16);
  return Math.floor((low20 / LOW_20_BITS) * ROLLOUT_SCALE);
}

/** Runs rounds `from` to `to` - 1 of the compression on `state`, with message words `words`. */
function compressRounds(state: Int32Array, words: Int32Array, from: number, to: number): void {
  let [a, b, c, d, e, f, g, h] = state as unknown as number[];
  for (let round = from; round < to; round++) {
    const s1 = ((e! >>> 6) | (e! << 26)) ^ ((e! >>> 11) | (e! << 21)) ^ ((e! >>> 25) | (e! << 7));
    const t1 = (h! + s1 + ((e! & f!) ^ (~e! & g!)) + K[round]! + words[round]!) | 0;
    const s0 = ((a! >>> 2) | (a! << 30)) ^ ((a! >>> 13) | (a! << 19)) ^ ((a! >>> 22) | (a! << 10));
    const t2 = (s0 + ((a! & b!) ^ (a! & c!) ^ (b! & c!))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d! + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state.set([a!, b!, c!, d!, e!, f!, g!, h!]);
}
