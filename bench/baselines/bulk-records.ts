/**
 * A second storage ceiling for `/bulk`: raw lmdb-js puts of every record one 1,000-event bulk is projected to — the
 * events and, for each, the user and company it touches and the analytics cells it counts in — captured from the real
 * tracking code in steady state (users, companies and memberships already known), then written raw, one bulk's
 * records per transaction, with the store's encoding. Not the target's baseline (that is the bulk ceiling, which
 * stores each item once); set against raw puts of the event records alone, it tells what the extra records cost.
 */
import { open } from "lmdb";
import { parseTrackingCall } from "../../src/schemas/tracking.js";
import { sequenceKeyPart, type KvStore, type KvTable, type TableName } from "../../src/storage/kv.js";
import { LmdbStore, TABLE_OPTIONS, VALUE_ENCODING } from "../../src/storage/lmdb-store.js";
import { applyTracking } from "../support/direct-tracking.js";
import { bulkContextEntitiesBody, bulkEventsBody } from "../support/fixtures.js";
import type { Lab } from "../support/lab.js";
import { tempDir } from "../support/processes.js";
import { median } from "../support/stats.js";

// Analytics and survey state derive from tracking only where they are registered, as every serving thread does.

const EVENTS_PER_BULK = 1000;
const ENVIRONMENT = "env_bench";
const LOG_TABLES: ReadonlySet<TableName> = new Set(["events", "featureEvents", "feedback", "promptEvents"]);

export interface BulkRecordsFigure {
  id: "lmdb-raw-bulk-records";
  title: string;
  /** Records (puts) one bulk of 1,000 events stores, per event. */
  recordsPerEvent: number;
  /** Events per second, as bulks' records written raw. */
  value: number;
  runs: number[];
}

type Put = [table: TableName, key: string, value: unknown];

/** A store that passes everything through and remembers the puts made while `recording` is on. */
function recordingStore(inner: KvStore, puts: Put[], recording: () => boolean): KvStore {
  const tables = new Map<TableName, KvTable>();
  return {
    kind: inner.kind,
    table<V>(name: TableName): KvTable<V> {
      let table = tables.get(name);
      if (!table) {
        const real = inner.table(name);
        table = {
          get: (key) => real.get(key),
          range: (options) => real.range(options),
          put: (key, value) => {
            if (recording()) puts.push([name, key, value]);
            real.put(key, value);
          },
          remove: (key) => real.remove(key),
        };
        tables.set(name, table);
      }
      return table as KvTable<V>;
    },
    write: (apply) => inner.write(apply),
    refresh: () => inner.refresh(),
    close: () => inner.close(),
  };
}

async function track(store: KvStore, body: unknown[]): Promise<void> {
  const parsed = parseTrackingCall("bulk", body);
  if (!parsed.ok) throw new Error(`bench fixture rejected: ${JSON.stringify(parsed.issues.slice(0, 3))}`);
  await applyTracking(store, ENVIRONMENT, parsed.items, Date.now());
}

/** The puts of one steady-state bulk of 1,000 events, as the ingestion code makes them. */
async function captureBulkPuts(): Promise<Put[]> {
  const directory = tempDir("switchyard-bench-capture-");
  const real = new LmdbStore({ path: directory.path, durability: "commit" });
  const puts: Put[] = [];
  let recording = false;
  const store = recordingStore(real, puts, () => recording);
  try {
    await track(store, bulkContextEntitiesBody());
    // The first bulk creates the memberships; the load's bulks find them, like the one recorded.
    await track(store, bulkEventsBody(EVENTS_PER_BULK, 0));
    recording = true;
    await track(store, bulkEventsBody(EVENTS_PER_BULK, EVENTS_PER_BULK));
    return puts;
  } finally {
    await real.close();
    directory.remove();
  }
}

export async function benchBulkRecords(lab: Lab): Promise<BulkRecordsFigure> {
  const puts = await captureBulkPuts();
  const directory = tempDir("switchyard-bench-bulk-records-");
  const root = open({ path: directory.path, noSubdir: false, maxDbs: 32, mapSize: 8 * 1024 ** 3, ...VALUE_ENCODING });
  const databases = new Map<TableName, ReturnType<typeof root.openDB<unknown, string>>>();
  for (const [table] of puts) if (!databases.has(table)) databases.set(table, root.openDB<unknown, string>({ name: table, ...TABLE_OPTIONS }));
  // Keys as the store writes them (raw UTF-8). Log entries get the next sequence number every time, so they are
  // appended at the end of their table as ingestion appends them; everything else is overwritten in place.
  const encoded = puts.map(([table, key, value]) => ({ db: databases.get(table)!, key, value, logPrefix: LOG_TABLES.has(table) ? key.slice(0, key.lastIndexOf("\u0000") + 1) : undefined }));
  let sequence = 1_000_000;
  const writeBulk = () =>
    root.transaction(() => {
      for (const put of encoded) put.db.putSync(put.logPrefix === undefined ? put.key : put.logPrefix + sequenceKeyPart(++sequence), put.value);
    });
  try {
    for (let warm = 0; warm < 5; warm++) await writeBulk();
    const runs: number[] = [];
    const bulks = Math.max(1, Math.round(lab.mode.lmdbEvents / EVENTS_PER_BULK));
    for (let repeat = 0; repeat < Math.max(3, lab.mode.repeats); repeat++) {
      const started = performance.now();
      for (let index = 0; index < bulks; index++) await writeBulk();
      runs.push((bulks * EVENTS_PER_BULK) / ((performance.now() - started) / 1000));
    }
    const figure: BulkRecordsFigure = {
      id: "lmdb-raw-bulk-records",
      title: `raw lmdb-js puts of every record a ${EVENTS_PER_BULK.toLocaleString("en")}-event /bulk stores (${(puts.length / EVENTS_PER_BULK).toFixed(2)} per event), one bulk per transaction (in-process)`,
      recordsPerEvent: puts.length / EVENTS_PER_BULK,
      value: median(runs),
      runs,
    };
    lab.log(`${figure.id}: ${Math.round(figure.value).toLocaleString("en")} events/s, ${figure.recordsPerEvent.toFixed(2)} records per event`);
    return figure;
  } finally {
    await root.close();
    directory.remove();
  }
}
