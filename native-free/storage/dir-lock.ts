import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

/** The lock file; it holds `pid@hostname` of the process that has the store open. */
export const LOCK_FILE = "switchyard-log-store.lock";

/** Raised when another process (or another LogStore in this one) has the data dir open; matched by `code`. */
export class DataDirLockedError extends Error {
  readonly code = "DATA_DIR_LOCKED";

  constructor(message: string) {
    super(message);
    this.name = "DataDirLockedError";
  }
}

/** A held data-dir lock. */
export interface DirLock {
  /** Removes the lock file if it is still ours. */
  release(): void;
}

interface Holder {
  pid: number;
  host: string;
}

function parseHolder(text: string): Holder | undefined {
  const match = /^(\d+)@(.*)$/.exec(text.trim());
  return match ? { pid: Number(match[1]), host: match[2]! } : undefined;
}

function readLockText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** Whether the process named by the lock may still be running; a lock from another machine is assumed live. */
function isLive(holder: Holder | undefined): boolean {
  if (!holder) return false;
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function lockedError(dir: string, text: string): DataDirLockedError {
  return new DataDirLockedError(
    `The data dir ${dir} is in use by process ${text.trim()} (lock file ${LOCK_FILE}). The native-free store allows one ` +
      "process at a time; stop the other one, or delete the lock file if that process is gone.",
  );
}

/**
 * Takes the data dir for this process. The lock file is made by hard-linking a fully written temp file into place,
 * so it never exists half-written, and link() fails if the name is taken. A lock left by a dead process on this
 * host is moved aside and re-checked before it is removed, so two processes reclaiming the same stale lock cannot
 * both win: the one that moves aside a lock that is no longer the stale one puts it back and gives up.
 */
export function acquireDirLock(dir: string): DirLock {
  const path = join(dir, LOCK_FILE);
  const ours = `${process.pid}@${hostname()}\n`;
  const temp = join(dir, `${LOCK_FILE}.${process.pid}.tmp`);
  writeFileSync(temp, ours);
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(temp, path);
        return { release: () => releaseLock(path, ours) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const text = readLockText(path);
      if (text === undefined) continue;
      if (isLive(parseHolder(text))) throw lockedError(dir, text);
      const aside = join(dir, `${LOCK_FILE}.stale.${process.pid}`);
      try {
        renameSync(path, aside);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw error;
      }
      const moved = readLockText(aside) ?? "";
      if (moved !== text) {
        // Someone replaced the stale lock with a live one between our read and our rename: put theirs back.
        try {
          linkSync(aside, path);
        } catch {
          // A third process has taken the name meanwhile; theirs stands.
        }
        unlinkSync(aside);
        throw lockedError(dir, moved);
      }
      unlinkSync(aside);
    }
    throw lockedError(dir, readLockText(path) ?? "unknown");
  } finally {
    unlinkSync(temp);
  }
}

function releaseLock(path: string, ours: string): void {
  if (readLockText(path) === ours) unlinkSync(path);
}
