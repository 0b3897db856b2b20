import * as zlib from "node:zlib";

type Crc32 = (data: Uint8Array, initial?: number) => number;

let table: Uint32Array | undefined;

/** The reflected CRC-32 (IEEE 802.3, zlib's), table-driven; only used on Node releases without zlib.crc32. */
function crc32InJs(data: Uint8Array, initial = 0): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = ~initial >>> 0;
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}

// zlib.crc32 arrived in Node 20.15; package.json still allows 20.12, so fall back to the JS table there.
const nativeCrc32 = (zlib as { crc32?: Crc32 }).crc32;

/** CRC-32 of `data`, continuing from `initial` (the CRC of what came before), as zlib computes it. */
export const crc32: Crc32 = nativeCrc32 ?? crc32InJs;

/** Exposed for the test that holds the fallback to zlib's answers. */
export { crc32InJs };
