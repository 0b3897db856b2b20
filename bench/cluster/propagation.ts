/**
 * Two cluster measurements that are not load runs: how long a flag change made through one node takes to reach an
 * SSE stream held on another, and how fast a node that starts empty applies a tracking backlog.
 */
import { call, type SeededApp } from "../support/seed.js";
import { BENCH_ADMIN_TOKEN, startService, tempDir } from "../support/processes.js";
import { bulkEventsBody } from "../support/fixtures.js";
import type { CatchUpFigure, PropagationFigure } from "./model.js";

/** An SSE stream's `flags-updated` versions, each with the moment it arrived. */
async function followFlags(url: string): Promise<{ arrivals: Map<number, number>; opened: Promise<void>; close(): void }> {
  const controller = new AbortController();
  const arrivals = new Map<number, number>();
  const response = await fetch(url, { headers: { accept: "text/event-stream" }, signal: controller.signal });
  if (response.status !== 200) throw new Error(`SSE ${url} answered ${response.status}`);
  let markOpened: () => void = () => {};
  const opened = new Promise<void>((resolveOpened) => (markOpened = resolveOpened));
  void (async () => {
    let pending = "";
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body ?? []) {
        const now = performance.now();
        pending += decoder.decode(chunk as Uint8Array, { stream: true });
        const frames = pending.split("\n\n");
        pending = frames.pop()!;
        for (const frame of frames) {
          if (!frame.startsWith("data: ")) continue;
          const message = JSON.parse(frame.slice("data: ".length)) as { name?: string; data?: { flagStateVersion?: number } };
          if (message.name === "flags-updated" && typeof message.data?.flagStateVersion === "number") {
            arrivals.set(message.data.flagStateVersion, now);
            markOpened();
          }
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  return { arrivals, opened, close: () => controller.abort() };
}

/** The nearest-rank percentile of ascending `sorted`. */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** Resolves once `check` holds, polling every few milliseconds; rejects after `timeoutMs`. */
async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 2));
  }
}

/**
 * `changes` targeting changes through `writerUrl`, one at a time, each awaited on a stream held on `readerUrl`:
 * the delay from sending the change to the stream delivering its version.
 */
export async function measurePropagation(writerUrl: string, readerUrl: string, app: SeededApp, changes: number): Promise<PropagationFigure> {
  const feature = "bench-propagation";
  const appId = encodeURIComponent(app.appId);
  const environmentId = encodeURIComponent(app.environmentId);
  await call(writerUrl, "PUT", `/admin/apps/${appId}/features/${feature}`, BENCH_ADMIN_TOKEN, {});
  // The reader knows the app's keys once it has caught up with the configuration log.
  const deadline = performance.now() + 60_000;
  while ((await health(readerUrl)).status !== 200) {
    if (performance.now() > deadline) throw new Error("the reader node did not catch up within 60 s");
    await new Promise((resolveWait) => setTimeout(resolveWait, 20));
  }
  const stream = await followFlags(`${readerUrl}/sse/client?publishableKey=${app.publishableKey}`);
  try {
    // The stream's first event carries the current version: from then on it is live.
    await Promise.race([stream.opened, until(() => false, 10_000, "first flags-updated on the reader's stream")]);
    const delays: number[] = [];
    const writes: number[] = [];
    for (let index = 0; index < changes; index++) {
      const sent = performance.now();
      const answer = (await call(writerUrl, "PUT", `/admin/environments/${environmentId}/features/${feature}/targeting`, BENCH_ADMIN_TOKEN, {
        rules: [{ filter: { type: "context", field: "user.id", operator: "IS", values: [`u${index}`] } }],
      })) as { flagStateVersion: number };
      writes.push(performance.now() - sent);
      await until(() => stream.arrivals.has(answer.flagStateVersion), 10_000, `flagStateVersion ${answer.flagStateVersion} on the reader's stream`);
      delays.push(stream.arrivals.get(answer.flagStateVersion)! - sent);
    }
    const sorted = [...delays].sort((a, b) => a - b);
    return {
      changes,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted.at(-1)!,
      writeP50Ms: percentile([...writes].sort((a, b) => a - b), 50),
    };
  } finally {
    stream.close();
  }
}

/** /health of a node: 200 with `cluster` once caught up. */
async function health(url: string): Promise<{ status: number; body: { cluster?: { caughtUp?: boolean; tracking?: { applied: number } } } }> {
  const response = await fetch(`${url}/health`);
  return { status: response.status, body: (await response.json()) as never };
}

/**
 * Tracks `events` through `writerUrl` (1,000-event /bulk bodies on streams of their own, `env`), then starts an empty
 * node on the same streams and times it until it applied the tracking stream's last message (`lastSequence` reads it
 * from JetStream; the node's own "caught up" flag is only re-checked every second, too coarse here).
 */
export async function measureCatchUp(
  writerUrl: string,
  app: SeededApp,
  events: number,
  env: Record<string, string>,
  workers: number,
  lastSequence: () => Promise<number>,
): Promise<CatchUpFigure> {
  for (let sent = 0; sent < events; sent += 1000) await call(writerUrl, "POST", "/bulk", app.publishableKey, bulkEventsBody(Math.min(1000, events - sent), sent));
  const target = await lastSequence();
  const data = tempDir("switchyard-bench-catch-up-");
  try {
    const spawned = performance.now();
    const fresh = await startService({ dataDir: data.path, workers, native: true, env });
    try {
      const listening = spawned + fresh.startupMs;
      let applied = 0;
      for (;;) {
        // /health answers 503 until the node's own check says caught up, with its live positions either way.
        applied = (await health(fresh.url)).body.cluster?.tracking?.applied ?? 0;
        if (applied >= target) break;
        if (performance.now() - spawned > 300_000) throw new Error("the fresh node did not catch up within 5 minutes");
        await new Promise((resolveWait) => setTimeout(resolveWait, 5));
      }
      const caughtUp = performance.now();
      const secondsFromSpawn = (caughtUp - spawned) / 1000;
      return {
        events,
        messages: applied,
        secondsFromSpawn,
        secondsFromListening: Math.max(0, (caughtUp - listening) / 1000),
        eventsPerSecond: events / secondsFromSpawn,
      };
    } finally {
      await fresh.stop();
    }
  } finally {
    data.remove();
  }
}
