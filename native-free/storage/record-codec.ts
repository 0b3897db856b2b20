import { Packr } from "msgpackr";
import { MSGPACK_VALUE_OPTIONS } from "../../src/storage/value-encoding.js";

/**
 * How values and batches are encoded.
 *
 * Values use msgpackr with the options the LMDB store gives it (plain maps, no records; `copyBuffers`), so a value
 * read back from this store is what LMDB would have returned: a fresh copy, Dates as Dates, Maps and objects as plain
 * objects, Sets as arrays. Values written with records (schema version 2) still decode. In memory a
 * value is kept as its msgpack bytes in a latin1 string, one character per byte: V8 stores such strings compactly,
 * about half the memory of a Uint8Array per value, and reading decodes a new copy every time, as LMDB does.
 *
 * Log and snapshot payloads use plain msgpack (no records) holding those bytes as `bin`.
 */
const valuePackr = new Packr({ copyBuffers: true, ...MSGPACK_VALUE_OPTIONS });
/** No copies on decode: payloads are read from a reused buffer and turned into strings before it is reused. */
const containerPackr = new Packr({ useRecords: false, copyBuffers: false });

/** A value as held in memory: msgpack bytes as a latin1 string. */
export type EncodedValue = string;
/** A change to one key: the new encoded value, or null for a removal. */
export type Change = EncodedValue | null;
/** Changes by table name, then by key. */
export type Changes = Map<string, Map<string, Change>>;

/** A value as the store keeps it; throws for what msgpack cannot carry (e.g. a BigInt over 64 bits). */
export function encodeValue(value: unknown): EncodedValue {
  const bytes = valuePackr.pack(value);
  return bytes.toString("latin1");
}

/** A fresh copy of a kept value. */
export function decodeValue(encoded: EncodedValue): unknown {
  return valuePackr.unpack(Buffer.from(encoded, "latin1"));
}

function toBytes(encoded: EncodedValue): Buffer {
  return Buffer.from(encoded, "latin1");
}

function fromBytes(bytes: Uint8Array): EncodedValue {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("latin1");
}

/** A log record: `[table, [key, bytes | null, key, bytes | null, …], table, […], …]`. */
export function encodeBatch(changes: Changes): Buffer {
  const record: unknown[] = [];
  for (const [table, tableChanges] of changes) {
    if (tableChanges.size === 0) continue;
    const flat: unknown[] = [];
    for (const [key, change] of tableChanges) flat.push(key, change === null ? null : toBytes(change));
    record.push(table, flat);
  }
  return containerPackr.pack(record);
}

/** Replays a log record, calling `apply` for each change in the order written. */
export function decodeBatch(payload: Uint8Array, apply: (table: string, key: string, change: Change) => void): void {
  const record = containerPackr.unpack(payload) as unknown[];
  if (!Array.isArray(record)) throw new Error("log record is not an array");
  for (let i = 0; i < record.length; i += 2) {
    const table = record[i] as string;
    const flat = record[i + 1] as unknown[];
    for (let j = 0; j < flat.length; j += 2) {
      const bytes = flat[j + 1] as Uint8Array | null;
      apply(table, flat[j] as string, bytes === null ? null : fromBytes(bytes));
    }
  }
}

/** Any small plain object (file headers, trailers). */
export function encodeMeta(value: object): Buffer {
  return containerPackr.pack(value);
}

/** Decodes a payload without interpreting it. */
export function decodeMeta(payload: Uint8Array): unknown {
  return containerPackr.unpack(payload);
}

/** A snapshot chunk: `[table, keys[], values[]]`, keys ascending. */
export function encodeSnapshotChunk(table: string, keys: readonly string[], values: readonly EncodedValue[]): Buffer {
  return containerPackr.pack([table, keys, values.map(toBytes)]);
}

/** A decoded snapshot frame that is an array (`decodeMeta` gives objects for the header and trailer). */
export function snapshotChunkOf(decoded: unknown[]): { table: string; keys: string[]; values: EncodedValue[] } {
  const [table, keys, values] = decoded as [string, string[], Uint8Array[]];
  return { table, keys, values: values.map(fromBytes) };
}
