/**
 * Resident memory and start-up time against stored data: users and companies are loaded through /bulk (as the SDKs
 * would send them), then the server's VmRSS is read while it runs and again after a restart, with the time from
 * spawn to "listening".
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { bulkEntitiesBody, featureDefinitions } from "../support/fixtures.js";
import type { Lab } from "../support/lab.js";
import { residentBytes, startService, tempDir, type RunningService } from "../support/processes.js";
import { waitCaughtUp } from "../support/projection.js";
import { postBulk, seedApp } from "../support/seed.js";

export interface StoredDataPoint {
  /** Users stored, and as many companies. */
  users: number;
  companies: number;
  /** Bytes of the data dir's files. */
  dataBytes: number;
  /** VmRSS of the running server after loading up to this point. */
  rssLoadedBytes: number | undefined;
  /** Spawn to "listening" when restarted on this data. */
  startupMs: number;
  /** VmRSS right after that restart and one evaluation of a stored user. */
  rssAfterRestartBytes: number | undefined;
  /** Seconds the /bulk loading up to this point took (from the previous point). */
  loadSeconds: number;
}

/** Users (and as many companies) per /bulk body: 2 × 5,000 items of ~100 B, well under the 2 MiB limit. */
const PAIRS_PER_BODY = 5000;

function directoryBytes(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, entry.name);
    total += entry.isDirectory() ? directoryBytes(full) : statSync(full).size;
  }
  return total;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

export async function benchStoredData(lab: Lab): Promise<StoredDataPoint[]> {
  const directory = tempDir("switchyard-bench-mem-");
  const options = { dataDir: directory.path, workers: 1, native: true };
  let service: RunningService = await startService(options);
  const points: StoredDataPoint[] = [];
  try {
    const app = await seedApp(service.url, "bench-memory", featureDefinitions(10));
    let stored = 0;
    for (const target of lab.mode.storedEntities) {
      const loadStarted = performance.now();
      while (stored < target) {
        const next = Math.min(target, stored + PAIRS_PER_BODY);
        await postBulk(service.url, app.publishableKey, bulkEntitiesBody(stored, next));
        stored = next;
      }
      // Stored means projected: the log append answers the body, the users and companies land after it.
      await waitCaughtUp(service.url);
      const loadSeconds = (performance.now() - loadStarted) / 1000;
      await settle();
      const rssLoadedBytes = residentBytes(service.pid);
      await service.stop();
      const dataBytes = directoryBytes(directory.path);
      service = await startService(options);
      // One evaluation that reads a stored user and company (remote context), as the first real request would.
      const probe = await fetch(`${service.url}/features/evaluated?context.user.id=mem-u0&context.company.id=mem-c0`, {
        headers: { Authorization: `Bearer ${app.publishableKey}` },
      });
      await probe.arrayBuffer();
      await settle();
      const point: StoredDataPoint = {
        users: stored,
        companies: stored,
        dataBytes,
        rssLoadedBytes,
        startupMs: service.startupMs,
        rssAfterRestartBytes: residentBytes(service.pid),
        loadSeconds,
      };
      points.push(point);
      lab.log(
        `stored ${stored.toLocaleString("en")} users + companies: RSS ${mib(point.rssLoadedBytes)} loaded, ${mib(point.rssAfterRestartBytes)} after restart; start-up ${point.startupMs.toFixed(0)} ms`,
      );
    }
    return points;
  } finally {
    await service.stop();
    directory.remove();
  }
}

function mib(bytes: number | undefined): string {
  return bytes === undefined ? "?" : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
