/**
 * SHA-256 of four one-block messages at once, in WebAssembly SIMD: each 32-bit word of the state and of the message
 * schedule is a v128 holding that word of all four messages. The rounds are the same serial chain as for one
 * message, so four lanes cost little more than one: ~100 ns a hash against ~350 ns for the JavaScript compression
 * (bench/evaluation/rollout-hash.ts). Only the first word of each digest is kept (the rollout bucket needs no more).
 */
import { FunctionSpec, I32, moduleBytes, op, V128 } from "./wasm-binary.js";
import { SHA256_ROUND_CONSTANTS } from "./sha256-constants.js";

const K = SHA256_ROUND_CONSTANTS;
const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** Lanes per call. */
export const LANES = 4;

/** Memory layout, in bytes: the schedule W[0..63], then the input block (16 words × 4 lanes), then the output. */
const SCHEDULE = 0;
const INPUT = 64 * 16;
const OUTPUT = INPUT + 16 * 16;

// Locals: 0 input address, 1 output address, then v128 a..h, t1, x, y.
const [A, B, C, D, E, F, G, H, T1, X, Y] = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] as const;

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
  // W[0..15]: the message.
  for (let t = 0; t < 16; t++) body.push(...op.i32Const(0), ...op.localGet(0), ...op.v128Load(t * 16), ...op.v128Store(SCHEDULE + t * 16));
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
  body.push(...op.localGet(1), ...op.localGet(A), ...splat(IV[0]!), ...op.i32x4Add, ...op.v128Store(0));
  return body;
}

const COMPRESS: FunctionSpec = { name: "compress", params: [I32, I32], locals: Array<number>(11).fill(V128), body: compressBody() };

interface Sha256x4Exports {
  memory: { buffer: ArrayBuffer };
  compress(input: number, output: number): void;
}

/** The part of the WebAssembly global used here (the project's type libraries do not declare it). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: WebAssemblyApi }).WebAssembly;

const instance = new wasm.Instance(new wasm.Module(moduleBytes(1, [COMPRESS])), {}).exports as Sha256x4Exports;

/**
 * The message words of the four lanes, interleaved: word t of lane j is `input[t * 4 + j]`. Fill the lanes
 * (RolloutHasher.fillLane writes all sixteen words of one; lanes left as they were give garbage nobody reads), call
 * `compressLanes()`, read each lane's first digest word from `output[j]`.
 */
export const input = new Int32Array(instance.memory.buffer, INPUT, 16 * LANES);
export const output = new Int32Array(instance.memory.buffer, OUTPUT, LANES);

export function compressLanes(): void {
  instance.compress(INPUT, OUTPUT);
}
