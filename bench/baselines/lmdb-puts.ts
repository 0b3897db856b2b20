/**
 * Raw storage speed: lmdb-js puts of the event record the projection stores, 1,000 per transaction, in this process,
 * with the store's own options (its msgpack value encoding, raw UTF-8 keys, commit durability). Once the baseline of
 * `/bulk`; now context for it (the bulk ceiling, baselines/transport.ts, is its baseline) and for the bulk-records one.
 */
import { open } from "lmdb";
import { sequenceKeyPart } from "../../src/storage/kv.js";
import { TABLE_OPTIONS, VALUE_ENCODING } from "../../src/storage/lmdb-store.js";
import { eventRecord } from "../support/fixtures.js";
import type { Lab } from "../support/lab.js";
import { tempDir } from "../support/processes.js";
import { median, spread, type Spread } from "../support/stats.js";

export const PUTS_PER_TRANSACTION = 1000;

export interface LmdbPutsFigure {
  id: "lmdb-raw-puts";
  title: string;
  unit: "events/s";
  putsPerTransaction: number;
  /** Events per second of each run. */
  runs: number[];
  value: number;
  spread: Spread;
  /** Microseconds per event at the median. */
  microsecondsPerEvent: number;
}

export async function benchLmdbPuts(lab: Lab): Promise<LmdbPutsFigure> {
  const directory = tempDir("switchyard-bench-lmdb-");
  const root = open({ path: directory.path, maxDbs: 4, mapSize: 8 * 1024 ** 3, ...VALUE_ENCODING });
  const events = root.openDB<unknown, string>({ name: "events", ...TABLE_OPTIONS });
  const records = Array.from({ length: PUTS_PER_TRANSACTION }, (_, index) => eventRecord(index));
  let sequence = 0;
  const writeBatch = () =>
    root.transaction(() => {
      for (const record of records) events.putSync(`env_bench\u0000${sequenceKeyPart(++sequence)}`, record);
    });
  try {
    // Warm-up: the first transactions grow the file and JIT the encoder.
    for (let batch = 0; batch < 5; batch++) await writeBatch();
    const runs: number[] = [];
    // Runs are short and commits share the disk with whatever else the machine does: always take a median of three.
    for (let repeat = 0; repeat < Math.max(3, lab.mode.repeats); repeat++) {
      const batches = Math.max(1, Math.round(lab.mode.lmdbEvents / PUTS_PER_TRANSACTION));
      const started = performance.now();
      for (let batch = 0; batch < batches; batch++) await writeBatch();
      runs.push((batches * PUTS_PER_TRANSACTION) / ((performance.now() - started) / 1000));
    }
    const value = median(runs);
    lab.log(`lmdb-raw-puts: ${Math.round(value).toLocaleString("en")} events/s`);
    return {
      id: "lmdb-raw-puts",
      title: `raw lmdb-js puts, ${PUTS_PER_TRANSACTION} per transaction (in-process)`,
      unit: "events/s",
      putsPerTransaction: PUTS_PER_TRANSACTION,
      runs,
      value,
      spread: spread(runs),
      microsecondsPerEvent: 1e6 / value,
    };
  } finally {
    await root.close();
    directory.remove();
  }
}
