/**
 * SHA-256 of four one-block messages at once, in WebAssembly SIMD: each 32-bit word of the state and of the message
 * schedule is a v128 holding that word of all four messages. The rounds are the same serial chain as for one
 * message, so four lanes cost little more than one, and a hash costs a fraction of a one-lane compression
 * (docs/BENCHMARKS.md, "Figures behind the code"). Only the
 * first word of each digest is kept (the rollout bucket needs no more).
 */
import { FunctionSpec, I32, moduleBytes, op, V128 } from "./wasm-binary.js";
import { SHA256_ROUND_CONSTANTS } from "./sha256-constants.js";

const K = SHA256_ROUND_CONSTANTS;
const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** Lanes per call. */
export const LANES = 4;

/**
 * Memory layout, in bytes. The schedule W[0..63], four lanes to a v128; each lane's message block, assembled in
 * message byte order with room for the value's stores to run past its end; the value slots; the lanes' parameters;
 * the output; then the prefix table, one 64-byte block per rollout prefix.
 */
const SCHEDULE = 0;
const MESSAGES = 64 * 16;
const MESSAGE_STRIDE = 128;
/**
 * A value's bytes, its 0x80 marker, zeros to 64 bytes. A context's user id meets every user-id rollout of the
 * ruleset, so a value is written once and read by many lanes (written per lane, it showed in evaluation's profile
 * (docs/BENCHMARKS.md, "Figures behind the code")).
 */
const VALUE_SLOTS = MESSAGES + LANES * MESSAGE_STRIDE;
const VALUE_SLOT_COUNT = 8;
const VALUE_SLOT_BYTES = 64;
/** Per lane: the prefix's address in the table, its length, the value's slot address. */
const PARAMS = VALUE_SLOTS + VALUE_SLOT_COUNT * VALUE_SLOT_BYTES;
const PARAMS_PER_LANE = 3;
/** Per lane: the message length in bits (message word 15). */
const LENGTH_BITS = PARAMS + LANES * PARAMS_PER_LANE * 4;
const OUTPUT = LENGTH_BITS + 16;
const PREFIX_BYTES = 64;
const PREFIX_TABLE = Math.ceil((OUTPUT + 16) / PREFIX_BYTES) * PREFIX_BYTES;
const PAGE_BYTES = 65_536;

// Locals: a..h, t1, x, y (v128), then the four rows of a transposition (v128), then a prefix length (i32).
const [A, B, C, D, E, F, G, H, T1, X, Y] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] as const;
const ROWS = [11, 12, 13, 14] as const;
const PREFIX_LENGTH = 15;

/** rotr(local, n) on every lane. */
const rotr = (local: number, n: number) => [
  ...op.localGet(local), ...op.i32Const(n), ...op.i32x4ShrU,
  ...op.localGet(local), ...op.i32Const(32 - n), ...op.i32x4Shl,
  ...op.v128Or,
];
const xor3 = (first: number[], second: number[], third: number[]) => [...first, ...second, ...op.v128Xor, ...third, ...op.v128Xor];
const shr = (local: number, n: number) => [...op.localGet(local), ...op.i32Const(n), ...op.i32x4ShrU];
const splat = (value: number) => [...op.i32Const(value), ...op.i32x4Splat];
const word = (index: number) => [...op.i32Const(0), ...op.v128Load(SCHEDULE + index * 16)];

function compressBody(): number[] {
  const body: number[] = [];
  body.push(...assembleMessages());
  // W[16..63] = W[t-16] + σ0(W[t-15]) + W[t-7] + σ1(W[t-2]).
  for (let t = 16; t < 64; t++) {
    body.push(...word(t - 15), ...op.localSet(X), ...word(t - 2), ...op.localSet(Y));
    body.push(...op.i32Const(0));
    body.push(...word(t - 16), ...xor3(rotr(X, 7), rotr(X, 18), shr(X, 3)), ...op.i32x4Add);
    body.push(...word(t - 7), ...op.i32x4Add, ...xor3(rotr(Y, 17), rotr(Y, 19), shr(Y, 10)), ...op.i32x4Add);
    body.push(...op.v128Store(SCHEDULE + t * 16));
  }
  [A, B, C, D, E, F, G, H].forEach((local, index) => body.push(...splat(IV[index]!), ...op.localSet(local)));
  const names = [A, B, C, D, E, F, G, H];
  for (let t = 0; t < 64; t++) {
    // The eight state words rotate by renaming: at round t, "a" is the local t rounds behind.
    const at = (position: number) => names[(((position - t) % 8) + 8) % 8]!;
    const [a, b, c, d, e, f, g, h] = [0, 1, 2, 3, 4, 5, 6, 7].map(at) as [number, number, number, number, number, number, number, number];
    // t1 = h + Σ1(e) + ch(e, f, g) + K[t] + W[t]
    body.push(...op.localGet(h), ...xor3(rotr(e, 6), rotr(e, 11), rotr(e, 25)), ...op.i32x4Add);
    body.push(...op.localGet(f), ...op.localGet(g), ...op.localGet(e), ...op.v128Bitselect, ...op.i32x4Add);
    body.push(...splat(K[t]!), ...op.i32x4Add, ...word(t), ...op.i32x4Add, ...op.localSet(T1));
    // d += t1
    body.push(...op.localGet(d), ...op.localGet(T1), ...op.i32x4Add, ...op.localSet(d));
    // h = t1 + Σ0(a) + maj(a, b, c), maj = (a & b) | (c & (a | b))
    body.push(...op.localGet(T1), ...xor3(rotr(a, 2), rotr(a, 13), rotr(a, 22)), ...op.i32x4Add);
    body.push(...op.localGet(a), ...op.localGet(b), ...op.v128And, ...op.localGet(c), ...op.localGet(a), ...op.localGet(b), ...op.v128Or, ...op.v128And, ...op.v128Or);
    body.push(...op.i32x4Add, ...op.localSet(h));
  }
  // After 64 rounds the names are back where they started: the first digest word is a + IV[0].
  body.push(...op.i32Const(0), ...op.localGet(A), ...splat(IV[0]!), ...op.i32x4Add, ...op.v128Store(OUTPUT));
  return body;
}

/**
 * W[0..15] of the four lanes. Each lane's block is its prefix's 64 bytes (zero after the prefix) with the value's
 * bytes and marker stored over them at the prefix's length; then the blocks' big-endian words are byte-swapped and
 * transposed, four words of four lanes at a time, into the schedule, and word 15 is the length. Filling the lanes word
 * by word in JavaScript (a strided copy of the prefix's sixteen words, the value ORed in byte by byte) cost about as
 * much as the compression itself.
 */
function assembleMessages(): number[] {
  const body: number[] = [];
  for (let lane = 0; lane < LANES; lane++) {
    const message = MESSAGES + lane * MESSAGE_STRIDE;
    const params = PARAMS + lane * PARAMS_PER_LANE * 4;
    for (let block = 0; block < 4; block++) {
      body.push(...op.i32Const(0), ...op.i32Const(0), ...op.i32Load(params), ...op.v128Load(block * 16));
      body.push(...op.v128Store(message + block * 16));
    }
    body.push(...op.i32Const(0), ...op.i32Load(params + 4), ...op.localSet(PREFIX_LENGTH));
    for (let block = 0; block < 4; block++) {
      body.push(...op.localGet(PREFIX_LENGTH), ...op.i32Const(0), ...op.i32Load(params + 8), ...op.v128Load(block * 16));
      body.push(...op.v128Store(message + block * 16, 0));
    }
  }
  // Byte indices of a 4 × 4 transposition of 32-bit words; the first step also swaps each word's bytes.
  const swappedPairs = (first: number, second: number) =>
    [first, second, first + 1, second + 1].flatMap((word) => [word * 4 + 3, word * 4 + 2, word * 4 + 1, word * 4]);
  const halves = (first: number, second: number) => [first, first + 1, second, second + 1].flatMap((word) => [0, 1, 2, 3].map((byte) => word * 4 + byte));
  for (let block = 0; block < 4; block++) {
    ROWS.forEach((row, lane) => body.push(...op.i32Const(0), ...op.v128Load(MESSAGES + lane * MESSAGE_STRIDE + block * 16), ...op.localSet(row)));
    const [r0, r1, r2, r3] = ROWS;
    // Rows become: r0 = lane 0 and 1's words 0, 1 interleaved; r1 = their words 2, 3; r2, r3 the same for lanes 2, 3.
    const interleave = (a: number, b: number, low: boolean) => [...op.localGet(a), ...op.localGet(b), ...op.i8x16Shuffle(swappedPairs(low ? 0 : 2, low ? 4 : 6))];
    body.push(...interleave(r0, r1, true), ...interleave(r0, r1, false), ...interleave(r2, r3, true), ...interleave(r2, r3, false));
    body.push(...op.localSet(r3), ...op.localSet(r2), ...op.localSet(r1), ...op.localSet(r0));
    const columns = [
      [r0, r2, halves(0, 4)],
      [r0, r2, halves(2, 6)],
      [r1, r3, halves(0, 4)],
      [r1, r3, halves(2, 6)],
    ] as const;
    columns.forEach(([low, high, picks], word) => {
      if (block * 4 + word === 15) return;
      body.push(...op.i32Const(0), ...op.localGet(low), ...op.localGet(high), ...op.i8x16Shuffle(picks), ...op.v128Store(SCHEDULE + (block * 4 + word) * 16));
    });
  }
  body.push(...op.i32Const(0), ...op.i32Const(0), ...op.v128Load(LENGTH_BITS), ...op.v128Store(SCHEDULE + 15 * 16));
  return body;
}

const COMPRESS: FunctionSpec = {
  name: "compress",
  params: [],
  locals: [...Array<number>(15).fill(V128), I32],
  body: compressBody(),
};

interface Sha256x4Exports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  compress(): void;
}

/** The part of the WebAssembly global used here (the project's type libraries do not declare it). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

const instance = new wasm.Instance(new wasm.Module(moduleBytes(1, [COMPRESS])), {}).exports as Sha256x4Exports;

function views(buffer: ArrayBuffer) {
  return {
    /** Lane j's prefix address at `params[3j]`, its length at `params[3j + 1]`, its value's slot at `params[3j + 2]`. */
    params: new Int32Array(buffer, PARAMS, LANES * PARAMS_PER_LANE),
    /** Lane j's message length in bits. */
    lengthBits: new Int32Array(buffer, LENGTH_BITS, LANES),
    /** Lane j's first digest word, big-endian, after compressLanes(). */
    output: new Int32Array(buffer, OUTPUT, LANES),
    all: new Uint8Array(buffer),
  };
}

/**
 * Where a lane's inputs go and its output comes from; replaced when the memory grows (its old buffer is then
 * detached), so read it through `lanes.` each time. Fill a lane with RolloutHasher.fillLane; lanes left as they
 * were give garbage nobody reads.
 */
export const lanes = views(instance.memory.buffer);

/** The values in the slots, and the slot written last; a slot is reused round robin. */
const slotValues: (string | undefined)[] = Array<string | undefined>(VALUE_SLOT_COUNT).fill(undefined);
let lastSlot = 0;

/**
 * The address of a slot holding `value`'s bytes, written now unless one of the last few values written was the same
 * string; -1 for a value that is not ASCII (bytes = char codes only for ASCII). `value` at most 55 characters.
 */
export function valueSlot(value: string): number {
  for (let back = 0; back < VALUE_SLOT_COUNT; back++) {
    const slot = (lastSlot - back) & (VALUE_SLOT_COUNT - 1);
    if (slotValues[slot] === value) return VALUE_SLOTS + slot * VALUE_SLOT_BYTES;
  }
  for (let index = 0; index < value.length; index++) if (value.charCodeAt(index) > 0x7f) return -1;
  const slot = (lastSlot = (lastSlot + 1) & (VALUE_SLOT_COUNT - 1));
  const bytes = lanes.all;
  const start = VALUE_SLOTS + slot * VALUE_SLOT_BYTES;
  // Clear what the slot's previous value left past this one's marker.
  const previousEnd = (slotValues[slot]?.length ?? -1) + 1;
  for (let index = value.length + 1; index < previousEnd; index++) bytes[start + index] = 0;
  for (let index = 0; index < value.length; index++) bytes[start + index] = value.charCodeAt(index);
  bytes[start + value.length] = 0x80;
  slotValues[slot] = value;
  return start;
}

const prefixAddresses = new Map<string, number>();
let prefixTableEnd = PREFIX_TABLE;

/**
 * The address of a prefix's 64-byte block in the table (its bytes, zeros after), interned: rulesets compiled again
 * and again share their keys' blocks, so the table grows only with keys never seen before. `bytes` at most 55.
 */
export function prefixAddress(prefix: string, bytes: Uint8Array): number {
  let address = prefixAddresses.get(prefix);
  if (address !== undefined) return address;
  address = prefixTableEnd;
  prefixTableEnd += PREFIX_BYTES;
  if (prefixTableEnd > instance.memory.buffer.byteLength) {
    instance.memory.grow(Math.ceil(instance.memory.buffer.byteLength / PAGE_BYTES));
    Object.assign(lanes, views(instance.memory.buffer));
  }
  lanes.all.set(bytes, address);
  prefixAddresses.set(prefix, address);
  return address;
}

/** Prefixes held in the table; for tests and metrics. */
export function prefixCount(): number {
  return prefixAddresses.size;
}

/** Sets lane `lane` to hash the prefix at `prefixAt` (`prefixLength` bytes) followed by the value in slot `valueAt`. */
export function setLane(lane: number, prefixAt: number, prefixLength: number, valueAt: number, valueLength: number): void {
  const params = lanes.params;
  params[lane * PARAMS_PER_LANE] = prefixAt;
  params[lane * PARAMS_PER_LANE + 1] = prefixLength;
  params[lane * PARAMS_PER_LANE + 2] = valueAt;
  lanes.lengthBits[lane] = (prefixLength + valueLength) * 8;
}

export function compressLanes(): void {
  instance.compress();
}
