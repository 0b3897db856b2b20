/** Errors of the log store, matched by `code` (they may cross a thread boundary as plain data). */

/** The files on disk do not add up (a log missing between others, a damaged log that is not the last one). */
export class LogCorruptError extends Error {
  readonly code = "LOG_STORE_CORRUPT";

  constructor(message: string) {
    super(message);
    this.name = "LogCorruptError";
  }
}

/**
 * A write to or fsync of the log failed. After a failed fsync the kernel may have dropped the dirty pages, so
 * retrying could report success for data that is not on disk; the store refuses every later write instead and
 * keeps serving reads. Restarting the process recovers from what the log really holds.
 */
export class StoreFailedError extends Error {
  readonly code = "LOG_STORE_FAILED";

  constructor(cause: unknown) {
    super(`The log store stopped accepting writes after an I/O error: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "StoreFailedError";
  }
}
