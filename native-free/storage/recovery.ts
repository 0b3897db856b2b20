import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { LOG_STORE_MARKER_FILE } from "../../src/storage/data-dir-kind.js";
import { writeFileAtomicSync } from "./file-io.js";
import { scanFrames } from "./frame.js";
import { decodeBatch, decodeMeta } from "./record-codec.js";
import { readSnapshot, SnapshotError } from "./snapshot.js";
import { LogCorruptError } from "./store-errors.js";
import { createLogFile, listStoreFiles, LOG_HEADER, logFileName, pruneBefore, snapshotFileName } from "./store-files.js";
import { TableState } from "./table-state.js";

const FIRST_GENERATION = 1;
const MARKER = { store: "switchyard-log-store", format: 1 } as const;

/** What opening the store found on disk. */
export interface RecoveryReport {
  /** Generation of the snapshot loaded, or null when none was. */
  snapshotGeneration: number | null;
  logsReplayed: number;
  recordsReplayed: number;
  /** Bytes of torn or corrupt tail cut from the last log. */
  truncatedBytes: number;
}

/** The state of a store directory, ready to take appends. */
export interface RecoveredStore {
  tables: Map<string, TableState>;
  /** Generation of the active log. */
  generation: number;
  /** The active log, open for appending at `logSize`. */
  fd: number;
  logSize: number;
  /** Size of the snapshot loaded (0 for none): the next snapshot waits until the log is at least this big. */
  snapshotBytes: number;
  report: RecoveryReport;
}

/** Writes the marker into a new store directory, or checks the one there names a format this release reads. */
export function ensureMarker(dir: string): void {
  const path = join(dir, LOG_STORE_MARKER_FILE);
  if (!existsSync(path)) {
    writeFileAtomicSync(dir, path, Buffer.from(`${JSON.stringify(MARKER)}\n`));
    return;
  }
  let marker: { store?: unknown; format?: unknown };
  try {
    marker = JSON.parse(readFileSync(path, "utf8")) as typeof marker;
  } catch {
    throw new LogCorruptError(`${path} is not a log store marker.`);
  }
  if (marker.store !== MARKER.store || marker.format !== MARKER.format) {
    throw new LogCorruptError(`${path} names format ${String(marker.format)}; this release reads format ${MARKER.format}.`);
  }
}

/**
 * Loads the newest valid snapshot, replays the logs after it, cuts a torn tail off the last one, and removes files
 * the loaded snapshot made redundant. See native-free/README.md, "Recovery on open".
 */
export function recoverStore(dir: string): RecoveredStore {
  const files = listStoreFiles(dir);
  for (const temp of files.temps) unlinkSync(join(dir, temp));

  let base = FIRST_GENERATION;
  let tables = new Map<string, TableState>();
  let snapshotBytes = 0;
  let snapshotGeneration: number | null = null;
  for (const generation of [...files.snapshots].reverse()) {
    try {
      const snapshot = readSnapshot(dir, generation);
      base = generation;
      tables = snapshot.tables;
      snapshotBytes = snapshot.bytes;
      snapshotGeneration = generation;
      break;
    } catch (error) {
      // A damaged snapshot is skipped; an older one is only usable if the logs since it still exist (checked next).
      if (!(error instanceof SnapshotError)) throw error;
    }
  }

  const logs = files.logs.filter((generation) => generation >= base);
  logs.forEach((generation, i) => {
    if (generation !== base + i) {
      const after = snapshotGeneration === null ? "no snapshot" : snapshotFileName(base);
      throw new LogCorruptError(`${dir}: expected log ${logFileName(base + i)} after ${after}, found ${logFileName(generation)}.`);
    }
  });

  const stateOf = (table: string): TableState => {
    let state = tables.get(table);
    if (!state) {
      state = new TableState();
      tables.set(table, state);
    }
    return state;
  };
  const report: RecoveryReport = { snapshotGeneration, logsReplayed: 0, recordsReplayed: 0, truncatedBytes: 0 };
  let fd = -1;
  let logSize = 0;
  for (const [i, generation] of logs.entries()) {
    const path = join(dir, logFileName(generation));
    const isLast = i === logs.length - 1;
    const logFd = openSync(path, isLast ? "r+" : "r");
    try {
      const size = fstatSync(logFd).size;
      let sawHeader = false;
      const scan = scanFrames(logFd, 0, size, (payload) => {
        if (!sawHeader) {
          const header = decodeMeta(payload) as { format?: unknown; version?: unknown; generation?: unknown };
          if (header.format !== LOG_HEADER.format || header.version !== LOG_HEADER.version || header.generation !== generation) {
            throw new LogCorruptError(`${path}: not a version ${LOG_HEADER.version} log of generation ${generation}.`);
          }
          sawHeader = true;
          return;
        }
        decodeBatch(payload, (table, key, change) => stateOf(table).apply(key, change));
        report.recordsReplayed++;
      });
      // Logs are created whole (temp file and rename), so even the newest one always has its header.
      if (!sawHeader) throw new LogCorruptError(`${path}: the log header is missing or damaged.`);
      if (scan.validEnd < size) {
        // Only the newest log is appended to after its predecessor was synced, so only it may be torn.
        if (!isLast) throw new LogCorruptError(`${path}: damaged at byte ${scan.validEnd}, and later logs follow it.`);
        ftruncateSync(logFd, scan.validEnd);
        fsyncSync(logFd);
        report.truncatedBytes = size - scan.validEnd;
      }
      report.logsReplayed++;
      if (isLast) {
        fd = logFd;
        logSize = scan.validEnd;
      }
    } finally {
      if (fd !== logFd) closeSync(logFd);
    }
  }
  if (fd === -1) {
    fd = createLogFile(dir, base);
    logSize = fstatSync(fd).size;
  }
  try {
    pruneBefore(dir, base);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  const generation = logs.length > 0 ? logs[logs.length - 1]! : base;
  return { tables, generation, fd, logSize, snapshotBytes, report };
}
