import { Packr } from "msgpackr";

/**
 * How both stores encode values with msgpackr: plain maps, no records, variable map sizes.
 *
 * Records (msgpackr's inline key lists) are off since schema version 3: writing and reading a definition per value
 * cost about half a microsecond each way per record, several records per event. Without them an object and a `Map`
 * are the same msgpack map, and both read back as plain objects. `variableMapSize` lets an object hold more than
 * 65,535 keys (a client can send one). Values written as records (schema version 2) still decode.
 */
export const MSGPACK_VALUE_OPTIONS = { useRecords: false, mapsAsObjects: true, variableMapSize: true } as const;

const packr = new Packr(MSGPACK_VALUE_OPTIONS);

/**
 * A value's msgpack bytes, as the stores would encode it: for parts of records encoded once and stored many times
 * (see LogGroup). A copy: msgpackr reuses its output buffer.
 */
export function packValue(value: unknown): Uint8Array {
  return Uint8Array.prototype.slice.call(packr.pack(value));
}

/** The values of consecutive msgpack encodings (see packValue). */
export function unpackValues(bytes: Uint8Array): unknown[] {
  return packr.unpackMultiple(bytes) as unknown[];
}
