/**
 * Just enough of the WebAssembly binary format to write one module with one exported memory and functions made of
 * straight-line SIMD code: what sha256x4.ts needs. Writing the bytes here keeps the build a single `tsc` and needs no
 * assembler at run time; the module is checked by the engine when compiled, and its results against node:crypto.
 */

/** Instruction bytes, with their immediates. */
export const op = {
  localGet: (index: number) => [0x20, ...unsigned(index)],
  localSet: (index: number) => [0x21, ...unsigned(index)],
  i32Const: (value: number) => [0x41, ...signed(value | 0)],
  /** i32 load with a 4-byte-aligned static offset. */
  i32Load: (offset: number) => [0x28, ...unsigned(2), ...unsigned(offset)],
  /** v128 load/store with a static offset; `alignLog2` 4 promises a 16-byte-aligned address, 0 promises nothing. */
  v128Load: (offset: number, alignLog2 = 4) => [0xfd, ...unsigned(0x00), ...unsigned(alignLog2), ...unsigned(offset)],
  v128Store: (offset: number, alignLog2 = 4) => [0xfd, ...unsigned(0x0b), ...unsigned(alignLog2), ...unsigned(offset)],
  /** Bytes of two v128 operands picked by 16 indices (0–15 the first, 16–31 the second). */
  i8x16Shuffle: (lanes: readonly number[]) => [0xfd, ...unsigned(0x0d), ...lanes],
  i32x4Splat: [0xfd, ...unsigned(0x11)],
  v128And: [0xfd, ...unsigned(0x4e)],
  v128Or: [0xfd, ...unsigned(0x50)],
  v128Xor: [0xfd, ...unsigned(0x51)],
  v128Bitselect: [0xfd, ...unsigned(0x52)],
  i32x4Shl: [0xfd, ...unsigned(0xab)],
  i32x4ShrU: [0xfd, ...unsigned(0xad)],
  i32x4Add: [0xfd, ...unsigned(0xae)],
  end: [0x0b],
} as const;

export const I32 = 0x7f;
export const V128 = 0x7b;

export interface FunctionSpec {
  name: string;
  params: number[];
  /** Local variable types after the parameters, in order. */
  locals: number[];
  /** The body's instructions, without the final `end`. */
  body: number[];
}

/** A module exporting `memory` (of `pages` 64 KiB pages) and each function (no results). */
export function moduleBytes(pages: number, functions: readonly FunctionSpec[]): Uint8Array {
  const types = functions.map((fn) => [0x60, ...vector(fn.params.map((type) => [type])), ...vector([])]);
  const code = functions.map((fn) => {
    const locals = vector(fn.locals.map((type) => [...unsigned(1), type]));
    const body = [...locals, ...fn.body, ...op.end];
    return [...unsigned(body.length), ...body];
  });
  const exports = [
    [...name("memory"), 0x02, ...unsigned(0)],
    ...functions.map((fn, index) => [...name(fn.name), 0x00, ...unsigned(index)]),
  ];
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector(types)),
    ...section(3, vector(functions.map((_, index) => unsigned(index)))),
    ...section(5, vector([[0x00, ...unsigned(pages)]])),
    ...section(7, vector(exports)),
    ...section(10, vector(code)),
  ]);
}

function section(id: number, contents: number[]): number[] {
  return [id, ...unsigned(contents.length), ...contents];
}

function vector(items: readonly (readonly number[])[]): number[] {
  return [...unsigned(items.length), ...items.flat()];
}

function name(text: string): number[] {
  const bytes = [...Buffer.from(text, "utf8")];
  return [...unsigned(bytes.length), ...bytes];
}

/** Unsigned LEB128. */
function unsigned(value: number): number[] {
  const bytes: number[] = [];
  let rest = value >>> 0;
  do {
    let byte = rest & 0x7f;
    rest >>>= 7;
    if (rest !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (rest !== 0);
  return bytes;
}

/** Signed LEB128 of a 32-bit integer. */
function signed(value: number): number[] {
  const bytes: number[] = [];
  let rest = value | 0;
  for (;;) {
    const byte = rest & 0x7f;
    rest >>= 7;
    const done = (rest === 0 && (byte & 0x40) === 0) || (rest === -1 && (byte & 0x40) !== 0);
    bytes.push(done ? byte : byte | 0x80);
    if (done) return bytes;
  }
}
