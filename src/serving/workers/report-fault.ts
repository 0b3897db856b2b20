/** A worker thread's report of a fault, as one JSON log line on stdout (the main thread's logger is not here). */
export function reportFault(error: unknown): void {
  process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level: "error", message: "job failed", error: String((error as Error)?.stack ?? error) })}\n`);
}
