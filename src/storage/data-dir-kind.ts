import { existsSync } from "node:fs";
import { join } from "node:path";

/**
 * Which store a data directory belongs to. The LMDB store and the native-free log store keep incompatible files;
 * opening one's directory with the other would either fail obscurely or, worse, start an empty store beside the
 * real data. Both stores call `assertDataDirKind` before touching the directory. Pure node:fs on purpose: the
 * native-free build must be able to import it without loading lmdb.
 */
export type DataDirKind = "lmdb" | "log" | "empty";

/** The file LMDB keeps its pages in. */
export const LMDB_DATA_FILE = "data.mdb";
/** The file the log store writes first, naming the directory as its own. */
export const LOG_STORE_MARKER_FILE = "switchyard-log-store.json";

/** What `path` holds; "empty" also when it does not exist yet or holds neither store's files. */
export function detectDataDirKind(path: string): DataDirKind {
  const hasLmdb = existsSync(join(path, LMDB_DATA_FILE));
  const hasLog = existsSync(join(path, LOG_STORE_MARKER_FILE));
  if (hasLmdb && hasLog) {
    throw new DataDirKindError(
      `${path} holds both an LMDB store (${LMDB_DATA_FILE}) and a log store (${LOG_STORE_MARKER_FILE}); ` +
        "refusing to guess which one is the data.",
    );
  }
  if (hasLmdb) return "lmdb";
  if (hasLog) return "log";
  return "empty";
}

/** Throws a clear error when `path` already belongs to the other kind of store. */
export function assertDataDirKind(path: string, wanted: "lmdb" | "log"): void {
  const found = detectDataDirKind(path);
  if (found === "empty" || found === wanted) return;
  throw new DataDirKindError(
    `${path} holds a${found === "lmdb" ? "n LMDB" : " native-free log"} store, but this server was started with the ` +
      `${wanted === "lmdb" ? "LMDB" : "native-free log"} store. Use a different data directory, or start the ` +
      "server with the store that wrote this one.",
  );
}

/** Raised for a data directory that belongs to the other store; matched by `code`. */
export class DataDirKindError extends Error {
  readonly code = "DATA_DIR_KIND_MISMATCH";

  constructor(message: string) {
    super(message);
    this.name = "DataDirKindError";
  }
}
