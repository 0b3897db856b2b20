/**
 * `switchyard restore FILE --data-dir DIR` (API.md §13.1), offline. The whole file is checked (header, trailer,
 * SHA-256) before anything is written; it is then unpacked into a temp dir beside DIR, checked again on the way (the
 * file could change in between), and renamed to DIR only when complete — so DIR is never left holding part of a store.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readSync, renameSync, rmdirSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { randomBase62 } from "../../tenancy/identifiers.js";
import { ADMIN_TOKEN_FILE } from "../../accounts/admin-token.js";
import { BACKUP_FORMAT, BACKUP_MAGIC, ENTRY_NAME, TRAILER_BYTES, checkBackupFile } from "./backup-format.js";

/** The longest header line the format writes, with room: a longer one means the file is not ours. */
const MAX_LINE_BYTES = 4096;

function emptyOrAbsent(dataDir: string): boolean {
  if (!existsSync(dataDir)) return true;
  return statSync(dataDir).isDirectory() && readdirSync(dataDir).length === 0;
}

export async function restoreBackup(file: string, dataDirInput: string): Promise<{ success: true; dataDir: string; bytes: number }> {
  const dataDir = resolve(dataDirInput);
  if (!emptyOrAbsent(dataDir)) throw new Error(`Refusing to restore into ${dataDir}: it is not empty (restore into an absent or empty directory; a running service's data dir is never touched).`);
  if (!existsSync(file)) throw new Error(`No file ${file}.`);
  const problem = checkBackupFile(file);
  if (problem) throw new Error(`Refusing to restore ${file}: ${problem}. Nothing was written to ${dataDir}.`);
  mkdirSync(dirname(dataDir), { recursive: true });
  const work = `${dataDir}.restoring-${randomBase62(8)}`;
  mkdirSync(work, { mode: 0o700 });
  try {
    unpack(file, work);
    if (existsSync(dataDir)) rmdirSync(dataDir);
    renameSync(work, dataDir);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    throw error;
  }
  return { success: true, dataDir, bytes: statSync(file).size };
}

/** Writes the backup's files into `work`, hashing every byte again and refusing anything out of format. */
function unpack(file: string, work: string): void {
  const fd = openSync(file, "r");
  try {
    const length = statSync(file).size - TRAILER_BYTES;
    const digest = createHash("sha256");
    let position = 0;
    const take = (bytes: number): Buffer => {
      const buffer = Buffer.alloc(bytes);
      const read = readSync(fd, buffer, 0, bytes, position);
      if (read !== bytes) throw new Error(`${file} changed while it was restored.`);
      digest.update(buffer);
      position += bytes;
      return buffer;
    };
    const line = (): unknown => {
      const peek = Buffer.alloc(Math.min(MAX_LINE_BYTES, length - position));
      readSync(fd, peek, 0, peek.length, position);
      const end = peek.indexOf(0x0a);
      if (end < 0) throw new Error(`${file} is not in the ${BACKUP_FORMAT} format (a header line is missing).`);
      return JSON.parse(take(end + 1).toString("utf8"));
    };
    if (take(BACKUP_MAGIC.length).toString("latin1") !== BACKUP_MAGIC) throw new Error(`${file} is not a Switchyard backup.`);
    const manifest = line() as { format?: unknown; store?: unknown };
    if (manifest.format !== BACKUP_FORMAT || (manifest.store !== "lmdb" && manifest.store !== "log")) throw new Error(`${file} is a backup this version cannot restore (${JSON.stringify(manifest)}).`);
    while (position < length) {
      const entry = line() as { file?: unknown; bytes?: unknown };
      if (typeof entry.file !== "string" || !ENTRY_NAME.test(entry.file) || !Number.isSafeInteger(entry.bytes) || (entry.bytes as number) < 0 || position + (entry.bytes as number) > length) {
        throw new Error(`${file} holds an entry out of format: ${JSON.stringify(entry)}.`);
      }
      const out = openSync(join(work, entry.file), "wx", entry.file === ADMIN_TOKEN_FILE ? 0o600 : 0o644);
      try {
        for (let left = entry.bytes as number; left > 0; ) {
          const chunk = take(Math.min(left, 1024 * 1024));
          writeSync(out, chunk);
          left -= chunk.length;
        }
      } finally {
        closeSync(out);
      }
    }
    const trailer = Buffer.alloc(TRAILER_BYTES);
    readSync(fd, trailer, 0, TRAILER_BYTES, length);
    if (!digest.digest().equals(trailer.subarray(16))) throw new Error(`${file} changed while it was restored (SHA-256 mismatch); nothing was kept.`);
  } finally {
    closeSync(fd);
  }
}
