/** A Server-Sent Events client for end-to-end tests: raw text in, complete frames out, and waits with deadlines. */

export interface SseConnection {
  status: number;
  headers: Headers;
  /** Milliseconds from the request to the status line and headers. */
  headersAfterMs: number;
  /** Everything received so far. */
  text(): string;
  /** The complete blocks received so far (each without its terminating blank line). */
  frames(): string[];
  /** The `flagStateVersion`s of the `flags-updated` events received so far, in order. */
  versions(): number[];
  /** Resolves once `predicate` holds for what was received, or rejects after `timeoutMs`. */
  waitFor(predicate: (connection: SseConnection) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves when the server ends the stream (or the connection breaks). */
  ended: Promise<void>;
  close(): void;
}

/** Opens `url` and resolves as soon as the headers arrive (a non-200 answer resolves too, with its body as text). */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const startedAt = Date.now();
  const response = await fetch(url, { headers: { accept: "text/event-stream", ...headers }, signal: controller.signal });
  const headersAfterMs = Date.now() - startedAt;
  let received = "";
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const waiter of [...waiters]) waiter();
  };
  let finished = false;
  const ended = (async () => {
    try {
      const decoder = new TextDecoder();
      for await (const chunk of response.body ?? []) {
        received += decoder.decode(chunk as Uint8Array, { stream: true });
        notify();
      }
    } catch {
      // Aborted by close(), or the connection broke: both end the stream.
    } finally {
      finished = true;
      notify();
    }
  })();
  const connection: SseConnection = {
    status: response.status,
    headers: response.headers,
    headersAfterMs,
    text: () => received,
    frames: () => received.split("\n\n").slice(0, -1),
    versions: () =>
      connection
        .frames()
        .filter((frame) => frame.startsWith("data: "))
        .map((frame) => JSON.parse(frame.slice("data: ".length)) as { name: string; data: { flagStateVersion: number } })
        .filter((message) => message.name === "flags-updated")
        .map((message) => message.data.flagStateVersion),
    waitFor(predicate, timeoutMs = 3_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (predicate(connection)) {
            done();
            resolve();
          } else if (finished) {
            done();
            reject(new Error(`stream ended before the condition held; received: ${JSON.stringify(received)}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`condition not met within ${timeoutMs} ms; received: ${JSON.stringify(received)}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    ended,
    close: () => controller.abort(),
  };
  return connection;
}
