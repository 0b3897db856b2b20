import { openSync, readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { fsyncDirSync, writeFileAtomicSync } from "./file-io.js";
import { encodeFrame } from "./frame.js";
import { encodeMeta } from "./record-codec.js";

/**
 * The files of a log store directory. Generation G has a log `G.wal` holding every change made after snapshot
 * `G.snapshot` (which holds everything before it). The log of G+1 is started before snapshot G+1 is written, so
 * at any moment the newest valid snapshot plus the logs from its generation on hold all committed data.
 */
const GENERATION_DIGITS = 16;
export const LOG_SUFFIX = ".wal";
export const SNAPSHOT_SUFFIX = ".snapshot";
export const TEMP_SUFFIX = ".tmp";

function generationPart(generation: number): string {
  return generation.toString().padStart(GENERATION_DIGITS, "0");
}

/** The name of log `generation`. */
export function logFileName(generation: number): string {
  return generationPart(generation) + LOG_SUFFIX;
}

/** The name of snapshot `generation`. */
export function snapshotFileName(generation: number): string {
  return generationPart(generation) + SNAPSHOT_SUFFIX;
}

export interface StoreFiles {
  /** Log generations, ascending. */
  logs: number[];
  /** Snapshot generations, ascending. */
  snapshots: number[];
  /** Leftover temp files of interrupted writes. */
  temps: string[];
}

/** The logs, snapshots and leftover temp files in `dir`. */
export function listStoreFiles(dir: string): StoreFiles {
  const files: StoreFiles = { logs: [], snapshots: [], temps: [] };
  const pattern = new RegExp(`^(\\d{${GENERATION_DIGITS}})(${LOG_SUFFIX.replace(".", "\\.")}|${SNAPSHOT_SUFFIX.replace(".", "\\.")})$`);
  for (const name of readdirSync(dir)) {
    const match = pattern.exec(name);
    if (match) {
      (match[2] === LOG_SUFFIX ? files.logs : files.snapshots).push(Number(match[1]));
    } else if (name.endsWith(TEMP_SUFFIX) && (name.includes(LOG_SUFFIX) || name.includes(SNAPSHOT_SUFFIX))) {
      files.temps.push(name);
    }
  }
  files.logs.sort((a, b) => a - b);
  files.snapshots.sort((a, b) => a - b);
  return files;
}

/** The first frame of every log; the generation in it must match the file name. */
export const LOG_HEADER = { format: "switchyard-log-store-wal", version: 1 } as const;

/** Creates log `generation` holding only its header, atomically; returns it open for appending. */
export function createLogFile(dir: string, generation: number): number {
  const path = join(dir, logFileName(generation));
  writeFileAtomicSync(dir, path, encodeFrame(encodeMeta({ ...LOG_HEADER, generation })));
  return openSync(path, "r+");
}

/** Removes logs and snapshots older than `generation`, which a durable snapshot has made redundant. */
export function pruneBefore(dir: string, generation: number): void {
  const files = listStoreFiles(dir);
  let removed = false;
  for (const log of files.logs) {
    if (log >= generation) continue;
    unlinkSync(join(dir, logFileName(log)));
    removed = true;
  }
  for (const snapshot of files.snapshots) {
    if (snapshot >= generation) continue;
    unlinkSync(join(dir, snapshotFileName(snapshot)));
    removed = true;
  }
  if (removed) fsyncDirSync(dir);
}
