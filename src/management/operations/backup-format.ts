/**
 * The backup file (API.md §13.1). Layout:
 *
 *   SWITCHYARD-BACKUP/1\n                                   magic line (also the HTTP stream's first bytes)
 *   {"format":"switchyard.backup/v1","store":"lmdb" | "log","createdAt":"…"}\n
 *   {"file":"data.mdb","bytes":N}\n  <N bytes>             one entry per file of the data dir, in order
 *   …
 *   trailer (48 bytes): "SYBK-END" | uint64 BE length of everything before the trailer | SHA-256 of it
 *
 * The trailer comes last because a stream can only fail by stopping: a file cut short has no trailer where its
 * length says, and an altered one fails the digest. Both are checked before a restore writes anything.
 */
import { createHash, type Hash } from "node:crypto";
import { closeSync, openSync, readSync, fstatSync } from "node:fs";

export const BACKUP_MAGIC = "SWITCHYARD-BACKUP/1\n";
export const BACKUP_FORMAT = "switchyard.backup/v1";
const TRAILER_MAGIC = Buffer.from("SYBK-END", "ascii");
export const TRAILER_BYTES = 8 + 8 + 32;
/** A file name in a backup: one path part of the data dir, nothing that could climb out of it. */
export const ENTRY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  /** Which store wrote the files: LMDB's copy, or the native-free log store's snapshot. */
  store: "lmdb" | "log";
  createdAt: string;
}

/** Tracks what was written so far: its length and running digest, for the trailer. */
export class BackupDigest {
  private readonly hash: Hash = createHash("sha256");
  length = 0;

  add(chunk: Uint8Array): Uint8Array {
    this.hash.update(chunk);
    this.length += chunk.length;
    return chunk;
  }

  trailer(): Buffer {
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(this.length));
    return Buffer.concat([TRAILER_MAGIC, length, this.hash.digest()]);
  }
}

export function manifestLine(manifest: BackupManifest): Buffer {
  return Buffer.from(`${JSON.stringify(manifest)}\n`, "utf8");
}

export function entryLine(file: string, bytes: number): Buffer {
  return Buffer.from(`${JSON.stringify({ file, bytes })}\n`, "utf8");
}

/** Why a file is not a whole, unaltered backup; undefined when it is one. Reads the file once. */
export function checkBackupFile(path: string): string | undefined {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const magic = Buffer.alloc(BACKUP_MAGIC.length);
    readSync(fd, magic, 0, magic.length, 0);
    if (size < BACKUP_MAGIC.length || magic.toString("latin1") !== BACKUP_MAGIC) return "it is not a Switchyard backup (no SWITCHYARD-BACKUP/1 header)";
    if (size < BACKUP_MAGIC.length + TRAILER_BYTES) return "it is cut short (no trailer)";
    const trailer = Buffer.alloc(TRAILER_BYTES);
    readSync(fd, trailer, 0, TRAILER_BYTES, size - TRAILER_BYTES);
    if (!trailer.subarray(0, 8).equals(TRAILER_MAGIC)) return "it is cut short or altered (no trailer at its end)";
    const length = Number(trailer.readBigUInt64BE(8));
    if (length !== size - TRAILER_BYTES) return `it is cut short or altered (the trailer gives ${length} bytes, the file holds ${size - TRAILER_BYTES})`;
    const digest = createHash("sha256");
    const buffer = Buffer.alloc(1024 * 1024);
    for (let position = 0; position < length; ) {
      const read = readSync(fd, buffer, 0, Math.min(buffer.length, length - position), position);
      if (read === 0) return "it is cut short";
      digest.update(buffer.subarray(0, read));
      position += read;
    }
    if (!digest.digest().equals(trailer.subarray(16))) return "it was altered (its SHA-256 does not match the trailer)";
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Splits a stream of bytes at a newline: the header lines of the format. */
export function readLine(buffer: Buffer, start: number): { line: string; next: number } | undefined {
  const end = buffer.indexOf(0x0a, start);
  return end < 0 ? undefined : { line: buffer.toString("utf8", start, end), next: end + 1 };
}
