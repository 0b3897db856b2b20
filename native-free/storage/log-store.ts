import { closeSync, fstatSync, mkdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { assertDataDirKind } from "../../src/storage/data-dir-kind.js";
import {
  TABLES,
  type DurabilityMode,
  type KvEntry,
  type KvStore,
  type KvStoreOptions,
  type KvTable,
  type RangeOptions,
  type TableName, type TableValue,
} from "../../src/storage/kv.js";
import { acquireDirLock, type DirLock } from "./dir-lock.js";
import { datasync, writeFully } from "./file-io.js";
import { encodeFrame } from "./frame.js";
import { inBounds, mergedRange } from "./merged-range.js";
import { decodeValue, encodeBatch, encodeValue, type Change, type Changes } from "./record-codec.js";
import { ensureMarker, recoverStore, type RecoveredStore, type RecoveryReport } from "./recovery.js";
import { writeSnapshot, type SnapshotTable } from "./snapshot.js";
import { StoreFailedError } from "./store-errors.js";
import { createLogFile, pruneBefore, snapshotFileName } from "./store-files.js";
import { TableState } from "./table-state.js";

export type { RecoveryReport } from "./recovery.js";

/** Rotate the log and snapshot once it holds this much (or, for a large store, as much as the last snapshot). */
const DEFAULT_SNAPSHOT_THRESHOLD_BYTES = 64 * 1024 * 1024;
/** LMDB's limit; enforced here too so that a key that works on one store works on the other. */
const MAX_KEY_BYTES = 1978;

export interface LogStoreTuning {
  /** Log size that triggers a snapshot; the effective threshold is the larger of this and the last snapshot's size. */
  snapshotThresholdBytes?: number;
  /** Errors of background work that loses nothing (a snapshot that failed: the logs it would replace stay). */
  onBackgroundError?: (error: Error) => void;
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}

/** The transactions of one group commit: their merged changes, appended as one log record. */
interface Group {
  changes: Changes;
  waiters: Waiter[];
}

/** How to undo one change of a running transaction if its apply throws. */
interface UndoEntry {
  changes: Map<string, Change>;
  key: string;
  previous: Change | undefined;
}

/**
 * The native-free KvStore: every table in memory (a Map for point reads, a sorted index for ranges), made durable
 * by an append-only log of group-committed batches and periodic snapshots. See native-free/README.md for the file
 * format, recovery and durability modes.
 *
 * Visibility follows LMDB: a read outside `write` sees committed data only; a read inside an `apply` also sees the
 * writes of its own transaction and of the transactions queued before it, which commit first.
 *
 * One process only: the data dir is locked while the store is open.
 */
export class LogStore implements KvStore {
  readonly kind = "log" as const;
  readonly recovery: RecoveryReport;

  private readonly dir: string;
  private readonly durability: DurabilityMode;
  private readonly snapshotThresholdBytes: number;
  private readonly onBackgroundError: (error: Error) => void;
  private readonly lock: DirLock;
  private readonly committed: Map<string, TableState>;
  private readonly handles = new Map<string, KvTable<unknown>>();

  private generation: number;
  private fd: number;
  private logSize: number;
  private lastSnapshotBytes: number;

  /** The group gathering this turn's transactions (the running one's changes included). */
  private gathering: Group | null = null;
  /** The group being appended; not yet in `committed`, but visible to later transactions. */
  private writing: Group | null = null;
  /** Undo entries of the running apply; non-null exactly while an apply runs. */
  private undo: UndoEntry[] | null = null;

  private drainRunning = false;
  private readonly idleWaiters: (() => void)[] = [];
  private syncing: Promise<void> | null = null;
  private syncWanted = false;
  private snapshotting: Promise<void> | null = null;
  private failure: StoreFailedError | null = null;
  private closing: Promise<void> | null = null;

  /** Opens (or creates) the store in `options.path`; recovery runs synchronously, like LMDB's open. */
  constructor(options: KvStoreOptions, tuning: LogStoreTuning = {}) {
    this.dir = options.path;
    this.durability = options.durability;
    this.snapshotThresholdBytes = tuning.snapshotThresholdBytes ?? DEFAULT_SNAPSHOT_THRESHOLD_BYTES;
    this.onBackgroundError = tuning.onBackgroundError ?? ((error) => process.emitWarning(error));
    mkdirSync(this.dir, { recursive: true });
    assertDataDirKind(this.dir, "log");
    this.lock = acquireDirLock(this.dir);
    let opened: RecoveredStore;
    try {
      ensureMarker(this.dir);
      opened = recoverStore(this.dir);
    } catch (error) {
      this.lock.release();
      throw error;
    }
    this.committed = opened.tables;
    this.generation = opened.generation;
    this.fd = opened.fd;
    this.logSize = opened.logSize;
    this.lastSnapshotBytes = opened.snapshotBytes;
    this.recovery = opened.report;
    for (const name of TABLES) this.handles.set(name, this.createHandle(name));
  }

  /** The same as the constructor, for callers that open stores asynchronously. */
  static async open(options: KvStoreOptions, tuning?: LogStoreTuning): Promise<LogStore> {
    return new LogStore(options, tuning);
  }

  table<N extends TableName, V extends TableValue<N> = TableValue<N>>(name: N): KvTable<V> {
    let handle = this.handles.get(name);
    if (!handle) {
      handle = this.createHandle(name);
      this.handles.set(name, handle);
    }
    return handle as KvTable<V>;
  }

  write<T>(apply: () => T): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing) return Promise.reject(new Error("The log store is closed."));
    if (this.undo) return Promise.reject(new Error("write() was called inside another write()'s apply; make the changes in one apply."));
    const group: Group = (this.gathering ??= { changes: new Map(), waiters: [] });
    const undo: UndoEntry[] = [];
    this.undo = undo;
    let result: T;
    try {
      result = apply();
      if (result instanceof Promise) throw new Error("apply returned a promise; it must make its changes synchronously.");
    } catch (error) {
      rollBack(undo);
      return Promise.reject(error);
    } finally {
      this.undo = null;
    }
    return new Promise<T>((resolve, reject) => {
      group.waiters.push({ resolve: () => resolve(result), reject });
      this.scheduleDrain();
    });
  }

  refresh(): void {
    // Only this process writes, and its writes are visible as soon as they commit.
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  // ---- reads and staged writes -------------------------------------------------------------------------------

  private createHandle(name: string): KvTable<unknown> {
    return {
      get: (key) => this.get(name, key),
      range: (options) => this.range(name, options),
      put: (key, value) => this.stage(name, key, encodeValue(value)),
      remove: (key) => this.stage(name, key, null),
    };
  }

  /** The encoded value as the caller sees it: inside an apply, uncommitted changes first. */
  private lookup(table: string, key: string): Change | undefined {
    if (this.undo) {
      const gathered = this.gathering?.changes.get(table)?.get(key);
      if (gathered !== undefined) return gathered;
      const written = this.writing?.changes.get(table)?.get(key);
      if (written !== undefined) return written;
    }
    return this.committed.get(table)?.values.get(key);
  }

  private get(table: string, key: string): unknown {
    const encoded = this.lookup(table, key);
    return encoded == null ? undefined : decodeValue(encoded);
  }

  private range(table: string, options: RangeOptions): Iterable<KvEntry<unknown>> {
    const { start, end, reverse = false, limit = Number.POSITIVE_INFINITY } = options;
    // Decided now, not when iteration starts: a range taken inside an apply keeps the apply's view.
    const overlay = this.undo ? this.overlayFor(table, start, end) : null;
    const state = this.committed.get(table);
    if (overlay) return decodeEntries(mergedRange(state, overlay, start, end, reverse, limit));
    if (!state) return [];
    return committedEntries(state, start, end, reverse, limit);
  }

  /** Uncommitted changes inside [start, end), later ones winning; null when there are none. */
  private overlayFor(table: string, start: string | undefined, end: string | undefined): Map<string, Change> | null {
    let overlay: Map<string, Change> | null = null;
    for (const group of [this.writing, this.gathering]) {
      const changes = group?.changes.get(table);
      if (!changes) continue;
      for (const [key, change] of changes) {
        if (!inBounds(key, start, end)) continue;
        (overlay ??= new Map()).set(key, change);
      }
    }
    return overlay;
  }

  private stage(table: string, key: string, change: Change): void {
    if (!this.undo) throw new Error(`put/remove on table "${table}" outside write(): changes must be made inside an apply.`);
    if (key.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(key) > MAX_KEY_BYTES) {
      throw new Error(`Key size is larger than the maximum key size (${MAX_KEY_BYTES} bytes)`);
    }
    // Removing what is not there changes nothing; keep it out of the log.
    if (change === null && this.lookup(table, key) == null) return;
    const group = this.gathering!;
    let changes = group.changes.get(table);
    if (!changes) {
      changes = new Map();
      group.changes.set(table, changes);
    }
    this.undo.push({ changes, key, previous: changes.get(key) });
    changes.set(key, change);
  }

  // ---- group commit ------------------------------------------------------------------------------------------

  private scheduleDrain(): void {
    if (this.drainRunning) return;
    this.drainRunning = true;
    // setImmediate, not a microtask: every write() of this event-loop turn, from any callback, joins the group.
    setImmediate(() => void this.drain());
  }

  /** Appends gathered groups one after another until none is left; writes arriving meanwhile form the next group. */
  private async drain(): Promise<void> {
    try {
      while (this.gathering && !this.failure) {
        const group = this.gathering;
        this.gathering = null;
        this.writing = group;
        try {
          await this.append(group);
        } catch (error) {
          this.fail(error);
        }
        this.writing = null;
        if (this.failure) {
          for (const waiter of group.waiters) waiter.reject(this.failure);
          break;
        }
        for (const [table, changes] of group.changes) {
          const state = this.stateOf(table);
          for (const [key, change] of changes) state.apply(key, change);
        }
        for (const waiter of group.waiters) waiter.resolve();
        if (!this.snapshotting && this.logSize >= Math.max(this.snapshotThresholdBytes, this.lastSnapshotBytes)) {
          try {
            await this.rotate();
          } catch (error) {
            this.fail(error);
          }
        }
      }
      if (this.failure && this.gathering) {
        for (const waiter of this.gathering.waiters) waiter.reject(this.failure);
        this.gathering = null;
      }
    } finally {
      // In the same synchronous step as the loop's last check, so a write() after it always schedules a drain.
      this.drainRunning = false;
      for (const notify of this.idleWaiters.splice(0)) notify();
    }
  }

  /** One log record per group, in one write() call; "flush" also waits for fdatasync. */
  private async append(group: Group): Promise<void> {
    let hasChanges = false;
    for (const changes of group.changes.values()) if (changes.size > 0) hasChanges = true;
    if (!hasChanges) return;
    const frame = encodeFrame(encodeBatch(group.changes));
    await writeFully(this.fd, frame, this.logSize);
    this.logSize += frame.length;
    if (this.durability === "flush") await datasync(this.fd);
    else this.requestSync();
  }

  /** "commit" mode: the data is in the OS already; sync it in the background, at most one fdatasync at a time. */
  private requestSync(): void {
    this.syncWanted = true;
    this.syncing ??= this.syncInBackground();
  }

  private async syncInBackground(): Promise<void> {
    try {
      while (this.syncWanted && !this.failure) {
        this.syncWanted = false;
        await datasync(this.fd);
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.syncing = null;
    }
  }

  private fail(error: unknown): void {
    this.failure ??= new StoreFailedError(error);
  }

  private whenIdle(): Promise<void> {
    if (!this.drainRunning) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private stateOf(table: string): TableState {
    let state = this.committed.get(table);
    if (!state) {
      state = new TableState();
      this.committed.set(table, state);
    }
    return state;
  }

  // ---- snapshots ---------------------------------------------------------------------------------------------

  /**
   * Starts log generation G+1 and writes snapshot G+1 of everything committed so far in the background. Runs
   * between two groups, so the captured tables are exactly the contents of logs up to G. The old log is synced
   * before the new one starts: only the newest log can ever have a torn tail.
   */
  private async rotate(): Promise<void> {
    const tables = this.captureTables();
    const next = this.generation + 1;
    await this.syncing;
    await datasync(this.fd);
    const fd = createLogFile(this.dir, next);
    closeSync(this.fd);
    this.fd = fd;
    this.generation = next;
    this.logSize = fstatSync(fd).size;
    this.snapshotting = this.snapshotAndPrune(next, tables);
  }

  /**
   * Copies everything committed so far into the empty `directory` as a store of its own (API.md §13.1's online
   * backup): a snapshot of the tables as captured now, between two groups, and an empty log after it.
   */
  async copyTo(directory: string): Promise<void> {
    const tables = this.captureTables();
    ensureMarker(directory);
    await writeSnapshot(directory, 1, tables);
    closeSync(createLogFile(directory, 1));
  }

  private captureTables(): SnapshotTable[] {
    const tables: SnapshotTable[] = [];
    for (const [name, state] of this.committed) {
      if (state.values.size === 0) continue;
      const keys = state.index.toArray();
      tables.push({ name, keys, values: keys.map((key) => state.values.get(key)!) });
    }
    return tables;
  }

  private async snapshotAndPrune(generation: number, tables: SnapshotTable[]): Promise<void> {
    try {
      this.lastSnapshotBytes = await writeSnapshot(this.dir, generation, tables);
      pruneBefore(this.dir, generation);
    } catch (error) {
      try {
        unlinkSync(join(this.dir, `${snapshotFileName(generation)}.tmp`));
      } catch {
        // Nothing to clean up, or it cannot be removed: the next open removes it.
      }
      this.onBackgroundError(error as Error);
    } finally {
      this.snapshotting = null;
    }
  }

  private async shutDown(): Promise<void> {
    await this.whenIdle();
    await this.snapshotting;
    await this.syncing;
    try {
      if (!this.failure) await datasync(this.fd);
    } finally {
      closeSync(this.fd);
      this.lock.release();
    }
  }
}

function rollBack(undo: UndoEntry[]): void {
  for (let i = undo.length - 1; i >= 0; i--) {
    const { changes, key, previous } = undo[i]!;
    if (previous === undefined) changes.delete(key);
    else changes.set(key, previous);
  }
}

function* committedEntries(
  state: TableState,
  start: string | undefined,
  end: string | undefined,
  reverse: boolean,
  limit: number,
): Generator<KvEntry<unknown>> {
  for (const key of state.index.keys(start, end, reverse, limit)) yield { key, value: decodeValue(state.values.get(key)!) };
}

function* decodeEntries(entries: Iterable<[string, string]>): Generator<KvEntry<unknown>> {
  for (const [key, encoded] of entries) yield { key, value: decodeValue(encoded) };
}
