/** The value codec of the store: msgpackr (what lmdb-js encodes with) against JSON, for one stored event record. */
import { Packr } from "msgpackr";
import { MSGPACK_VALUE_OPTIONS } from "../../src/storage/value-encoding.js";
import { eventRecord } from "../support/fixtures.js";
import { consume, runMicro, type MicroFigure, type MicroOptions } from "../support/micro.js";

export async function benchEventCodec(options: MicroOptions): Promise<MicroFigure[]> {
  // The stores' own value options (src/storage/value-encoding.ts).
  const packr = new Packr(MSGPACK_VALUE_OPTIONS);
  const records = Array.from({ length: 1000 }, (_, index) => eventRecord(index));
  const packed = records.map((record) => packr.pack(record));
  const json = records.map((record) => Buffer.from(JSON.stringify(record)));
  let next = 0;
  return runMicro(
    "event record codec",
    [
      { name: "msgpackr pack", fn: () => consume(packr.pack(records[next++ % records.length])) },
      { name: "JSON.stringify → Buffer", fn: () => consume(Buffer.from(JSON.stringify(records[next++ % records.length]))) },
      { name: "msgpackr unpack", fn: () => consume(packr.unpack(packed[next++ % packed.length]!)) },
      { name: "JSON.parse ← Buffer", fn: () => consume(JSON.parse(json[next++ % json.length]!.toString())) },
    ],
    options,
  );
}

/** Encoded sizes, for the report. */
export function eventRecordSizes(): { msgpackBytes: number; jsonBytes: number } {
  const record = eventRecord(1);
  return { msgpackBytes: new Packr(MSGPACK_VALUE_OPTIONS).pack(record).length, jsonBytes: Buffer.byteLength(JSON.stringify(record)) };
}
