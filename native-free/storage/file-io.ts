import { closeSync, fdatasync, fsyncSync, openSync, renameSync, write, writeSync } from "node:fs";
import { open } from "node:fs/promises";

/** Writes all of `data` at `position`; a short write (rare on files, but allowed) continues where it stopped. */
export function writeFully(fd: number, data: Uint8Array, position: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const step = (offset: number): void => {
      write(fd, data, offset, data.length - offset, position + offset, (error, written) => {
        if (error) reject(error);
        else if (offset + written >= data.length) resolve();
        else step(offset + written);
      });
    };
    step(0);
  });
}

/** fdatasync: the data and the size of the file reach the disk, not the timestamps. */
export function datasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

/**
 * Windows cannot open a directory to fsync it, and NTFS journals renames itself; everywhere else the directory
 * must be synced for a rename or unlink to survive a power loss.
 */
const CAN_SYNC_DIRECTORIES = process.platform !== "win32";

/** Makes a rename or unlink in `dir` durable; without it a crash can bring back the old directory entry. */
export function fsyncDirSync(dir: string): void {
  if (!CAN_SYNC_DIRECTORIES) return;
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** `fsyncDirSync`, without blocking the event loop. */
export async function fsyncDir(dir: string): Promise<void> {
  if (!CAN_SYNC_DIRECTORIES) return;
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes a small file so that it exists either whole or not at all: temp file, fsync, rename, fsync the dir. */
export function writeFileAtomicSync(dir: string, path: string, data: Uint8Array): void {
  const temp = `${path}.tmp`;
  const fd = openSync(temp, "w");
  try {
    let offset = 0;
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset, offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
  fsyncDirSync(dir);
}
