import { closeSync, fstatSync, openSync, renameSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { fsyncDir } from "./file-io.js";
import { encodeFrame, scanFrames } from "./frame.js";
import { decodeMeta, encodeMeta, encodeSnapshotChunk, snapshotChunkOf, type EncodedValue } from "./record-codec.js";
import { snapshotFileName, TEMP_SUFFIX } from "./store-files.js";
import { TableState } from "./table-state.js";

/**
 * A snapshot file: a header frame, chunk frames of sorted entries per table, and a trailer frame with the entry
 * count. It is written to a temp name and renamed into place after an fsync, so a snapshot that exists under its
 * real name is whole; the trailer still guards against a file damaged later.
 */
const FORMAT = "switchyard-log-store-snapshot";
const VERSION = 1;
/** Entries per chunk frame, and the size at which a chunk is cut early; keeps each write and decode small. */
const CHUNK_ENTRIES = 4096;
const CHUNK_BYTES = 1024 * 1024;

/** One table as captured for a snapshot: arrays taken at one instant, never mutated afterwards. */
export interface SnapshotTable {
  name: string;
  keys: string[];
  values: EncodedValue[];
}

/** A snapshot that is not whole or not valid; recovery falls back to an older one. */
export class SnapshotError extends Error {
  readonly code = "SNAPSHOT_INVALID";
}

/** Writes snapshot `generation` into `dir`; resolves with its size in bytes once it is durable under its name. */
export async function writeSnapshot(dir: string, generation: number, tables: readonly SnapshotTable[]): Promise<number> {
  const path = join(dir, snapshotFileName(generation));
  const temp = path + TEMP_SUFFIX;
  const handle = await open(temp, "w");
  let position = 0;
  let entries = 0;
  const append = async (payload: Uint8Array): Promise<void> => {
    const frame = encodeFrame(payload);
    let written = 0;
    while (written < frame.length) {
      const { bytesWritten } = await handle.write(frame, written, frame.length - written, position + written);
      written += bytesWritten;
    }
    position += frame.length;
  };
  try {
    await append(encodeMeta({ format: FORMAT, version: VERSION, generation }));
    for (const table of tables) {
      let from = 0;
      while (from < table.keys.length) {
        let to = from;
        let bytes = 0;
        while (to < table.keys.length && to - from < CHUNK_ENTRIES && bytes < CHUNK_BYTES) {
          bytes += table.keys[to]!.length + table.values[to]!.length;
          to++;
        }
        await append(encodeSnapshotChunk(table.name, table.keys.slice(from, to), table.values.slice(from, to)));
        entries += to - from;
        from = to;
      }
    }
    await append(encodeMeta({ end: true, entries }));
    await handle.datasync();
  } finally {
    await handle.close();
  }
  renameSync(temp, path);
  await fsyncDir(dir);
  return position;
}

/** Reads snapshot `generation`; throws SnapshotError if it is not whole and valid. */
export function readSnapshot(dir: string, generation: number): { tables: Map<string, TableState>; bytes: number } {
  const path = join(dir, snapshotFileName(generation));
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const keys = new Map<string, string[]>();
    const values = new Map<string, EncodedValue[]>();
    let header: { format?: unknown; version?: unknown; generation?: unknown } | undefined;
    let trailer: { end?: unknown; entries?: unknown } | undefined;
    let entries = 0;
    const scan = scanFrames(fd, 0, size, (payload) => {
      if (trailer) throw new SnapshotError(`${path}: data after the trailer`);
      if (!header) {
        header = decodeMeta(payload) as typeof header;
        return;
      }
      const decoded = decodeMeta(payload);
      if (!Array.isArray(decoded)) {
        trailer = decoded as typeof trailer;
        return;
      }
      const chunk = snapshotChunkOf(decoded);
      let tableKeys = keys.get(chunk.table);
      let tableValues = values.get(chunk.table);
      if (!tableKeys || !tableValues) {
        tableKeys = [];
        tableValues = [];
        keys.set(chunk.table, tableKeys);
        values.set(chunk.table, tableValues);
      }
      for (let i = 0; i < chunk.keys.length; i++) {
        tableKeys.push(chunk.keys[i]!);
        tableValues.push(chunk.values[i]!);
      }
      entries += chunk.keys.length;
    });
    if (header?.format !== FORMAT || header.version !== VERSION || header.generation !== generation) {
      throw new SnapshotError(`${path}: not a version ${VERSION} snapshot of generation ${generation}`);
    }
    if (scan.validEnd !== size || trailer?.end !== true || trailer.entries !== entries) {
      throw new SnapshotError(`${path}: incomplete or damaged (read ${scan.validEnd} of ${size} bytes)`);
    }
    const tables = new Map<string, TableState>();
    for (const [name, tableKeys] of keys) tables.set(name, TableState.fromSorted(tableKeys, values.get(name)!));
    return { tables, bytes: size };
  } finally {
    closeSync(fd);
  }
}
