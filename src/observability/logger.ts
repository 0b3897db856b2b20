/** One JSON line per event on stdout. Never pass keys or tokens in `fields`. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level: "silent" | "info"): Logger {
  const write = (severity: string, message: string, fields?: Record<string, unknown>) => {
    process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level: severity, message, ...fields })}\n`);
  };
  return {
    info: level === "silent" ? () => {} : (message, fields) => write("info", message, fields),
    // Errors are worth a line even when the service is asked to be quiet.
    error: (message, fields) => write("error", message, fields),
  };
}
