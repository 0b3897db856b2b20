import { existsSync } from "node:fs";
import { join } from "node:path";

/** The file the native-free log store writes to mark a data dir as its own. */
export const LOG_STORE_MARKER = "switchyard-log-store";

/** Which store wrote a data dir, so that neither store ever opens the other's. */
export function detectDataDirKind(path: string): "lmdb" | "log" | "empty" {
  if (existsSync(join(path, "data.mdb"))) return "lmdb";
  if (existsSync(join(path, LOG_STORE_MARKER))) return "log";
  return "empty";
}
