import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { open, type Database, type DatabaseOptions, type RootDatabase } from "lmdb";
import { assertDataDirKind } from "./data-dir-kind.js";
import { MSGPACK_VALUE_OPTIONS } from "./value-encoding.js";
import { TABLES, type KvEntry, type KvStore, type KvStoreOptions, type KvTable, type RangeOptions, type TableName, type TableValue } from "./kv.js";

/** lmdb-js options for values: its msgpack encoding with our msgpackr options, no shared structures (value-encoding.ts). */
export const VALUE_ENCODING = { encoding: "msgpack", sharedStructuresKey: undefined, ...MSGPACK_VALUE_OPTIONS } as const;

/** Grows on demand; LMDB reserves address space, not disk. */
const MAP_SIZE = 64 * 1024 ** 3;

/**
 * Keys are stored as their raw UTF-8 bytes: LMDB then orders them exactly as the seam promises, and nothing
 * re-encodes them (lmdb-js's ordered-binary escapes U+0000 only in keys under 64 characters, so longer composite
 * keys fell outside their own prefix ranges). They are written straight into lmdb-js's key buffer and read back as
 * strings: a Buffer per key was an allocation on every read and write (two reads and several writes per event).
 */
export const UTF8_KEYS = {
  writeKey(key: string, target: Buffer, start: number): number {
    const written = target.write(key, start);
    // write() stops at the buffer's end: a key cut there must fail as too long (lmdb-js's RangeError), not be used.
    if (key.length * 3 > target.length - start && written !== Buffer.byteLength(key)) throw new RangeError("The key does not fit the key buffer.");
    return start + written;
  },
  readKey(target: Buffer, start: number, end: number): string {
    return target.toString("utf8", start, end);
  },
};

/**
 * How every table is opened (the benchmarks' raw-put baselines too). keyEncoder is an lmdb-js option its type
 * declarations leave out; with it, keys are raw bytes on disk exactly as with `keyEncoding: "binary"`.
 */
export const TABLE_OPTIONS = { ...VALUE_ENCODING, keyEncoder: UTF8_KEYS } as DatabaseOptions;

class LmdbTable<V> implements KvTable<V> {
  constructor(private readonly db: Database<V, string>) {}

  get(key: string): V | undefined {
    return this.db.get(key);
  }

  *range(options: RangeOptions): Iterable<KvEntry<V>> {
    for (const { key, value } of this.db.getRange(lmdbRangeOptions(options))) yield { key: key as string, value };
  }

  put(key: string, value: V): void {
    // Inside a transaction callback putSync writes into the current transaction.
    this.db.putSync(key, value);
  }

  remove(key: string): void {
    this.db.removeSync(key);
  }
}

/**
 * lmdb-js walks a reverse range from `start` down to `end`, so `start` is the upper bound there. Our contract keeps
 * `start` the inclusive lower and `end` the exclusive upper bound in both directions: swap them for a reverse
 * range and flip which end is inclusive.
 */
function lmdbRangeOptions(options: RangeOptions): LmdbRange {
  const { start, end } = options;
  if (!options.reverse) return { start, end, limit: options.limit };
  return { start: end, end: start, reverse: true, limit: options.limit, exclusiveStart: end !== undefined, inclusiveEnd: start !== undefined };
}

interface LmdbRange {
  start: string | undefined;
  end: string | undefined;
  reverse?: boolean;
  limit: number | undefined;
  exclusiveStart?: boolean;
  inclusiveEnd?: boolean;
}

type ChildOutcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

function runAsChild<T>(root: RootDatabase, apply: () => T): ChildOutcome<T> {
  try {
    return { ok: true, value: root.transactionSync(apply) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The tracking log's own LMDB environment: one file beside the main environment's `data.mdb` (and its lock file). */
export const TRACKING_LOG_FILE = "tracking-log.mdb";

/**
 * The LMDB implementation of the storage seam: one environment, one named database per table, msgpack values; and
 * the tracking log in an environment of its own (`trackingLog`), because LMDB has one writer per environment: a
 * projection step writing for tens of milliseconds would otherwise hold up every append, and every 200 with it.
 */
export class LmdbStore implements KvStore {
  readonly kind = "lmdb" as const;
  readonly trackingLog: LmdbStore | undefined;
  private readonly root: RootDatabase;
  private readonly tables = new Map<TableName, LmdbTable<unknown>>();

  constructor(
    private readonly options: KvStoreOptions,
    /** Internal: the tracking log's environment, a file in the data dir holding that one table. */
    logFile?: string,
  ) {
    if (logFile === undefined) {
      mkdirSync(options.path, { recursive: true });
      assertDataDirKind(options.path, "lmdb");
    }
    this.root = open({
      path: logFile ?? options.path,
      // lmdb-js guesses "path is a file" from any extension-like suffix (`data.v2`, mktemp's `tmp.XYZ`): say which.
      noSubdir: logFile !== undefined,
      maxDbs: TABLES.length + 4,
      mapSize: MAP_SIZE,
      ...VALUE_ENCODING,
    });
    for (const name of logFile === undefined ? TABLES.filter((table) => table !== "trackingLog") : (["trackingLog"] as const)) {
      const db = this.root.openDB<unknown, string>({ name, ...TABLE_OPTIONS });
      this.tables.set(name, new LmdbTable(db));
    }
    this.trackingLog = logFile === undefined ? new LmdbStore(options, join(options.path, TRACKING_LOG_FILE)) : undefined;
  }

  /** `trackingLog` is its own environment's table (write to it through `trackingLog.write`). */
  table<N extends TableName, V extends TableValue<N> = TableValue<N>>(name: N): KvTable<V> {
    const table = this.tables.get(name) ?? this.trackingLog?.tables.get(name);
    if (table === undefined) throw new Error(`The tracking log's environment holds no ${name} table.`);
    return table as KvTable<V>;
  }

  async write<T>(apply: () => T): Promise<T> {
    // A throw inside lmdb-js's batched transaction callback does not roll back what the callback wrote, and the
    // batch may hold other requests' writes; a nested transactionSync is a child transaction that aborts alone.
    const outcome = await this.root.transaction(() => runAsChild(this.root, apply));
    if (!outcome.ok) throw outcome.error;
    if (this.options.durability === "flush") await this.root.flushed;
    return outcome.value;
  }

  refresh(): void {
    this.root.resetReadTxn();
    this.trackingLog?.refresh();
  }

  /**
   * mdb_env_copy2 with compaction, on lmdb-js's thread pool: one read transaction copied, the writer never waits.
   * The main environment first, then the tracking log: the copy's log holds every record its projector position
   * covers (and perhaps more, which the restored service projects).
   */
  async copyTo(directory: string): Promise<void> {
    await this.root.backup(directory, true);
    if (this.trackingLog !== undefined) await this.trackingLog.root.backup(join(directory, TRACKING_LOG_FILE), true);
  }

  async close(): Promise<void> {
    await this.trackingLog?.close();
    await this.root.close();
  }
}
