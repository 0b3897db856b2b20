/**
 * Server CPU per request, stage by stage (query parse, key resolution, remote context, evaluation, rollout hashing,
 * serialisation, response write, thread hop, GC), for GET /features/evaluated with distinct contexts: the service is
 * run with `node --cpu-prof`, loaded, stopped, and its profiles read (see support/cpu-stages.ts). The profiler costs
 * some CPU itself (its own thread is left out; its sampling inflates the rest by a few per cent), so these are the
 * breakdown of a run, not a throughput figure.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { profileStages, stagesPerRequest, type Stage, type ThreadProfile } from "../support/cpu-stages.js";
import { runLoad, type Driver, type RequestSpec } from "../support/load.js";
import { cpuBetween, threadTicks } from "../support/thread-cpu.js";

export interface StageFigure {
  title: string;
  features: number;
  workers: number;
  requests: number;
  rps: number;
  /** All threads' CPU per request, µs. */
  totalUs: number;
  stages: Record<Stage, number>;
}

/** The interval of the profiles the service is started with (µs). */
export const PROFILE_INTERVAL_US = 250;

export function profilingNodeArgs(profileDir: string): string[] {
  return ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-interval=${PROFILE_INTERVAL_US}`];
}

export interface ProfiledService {
  pid: number;
  url: string;
  stop(): Promise<unknown>;
}

/**
 * Loads a service started with profilingNodeArgs(profileDir) (warm-up, then one measured run), stops it, and reads
 * the stages. The service is stopped by this call.
 */
export async function measureStages(
  service: ProfiledService,
  profileDir: string,
  load: { driver: Driver; requests: readonly RequestSpec[]; connections: number; seconds: number; scratchDir: string },
  labels: { title: string; features: number; workers: number },
): Promise<StageFigure> {
  const spec = { baseUrl: service.url, requests: load.requests, connections: load.connections, durationSeconds: 2 };
  await runLoad(load.driver, spec, load.scratchDir);
  const before = threadTicks(service.pid);
  const started = performance.now();
  const result = await runLoad(load.driver, { ...spec, durationSeconds: load.seconds }, load.scratchDir);
  const measuredMs = performance.now() - started;
  const cpu = cpuBetween(before, threadTicks(service.pid));
  const stoppedAt = performance.now();
  await service.stop();
  // The profiles end at exit: the measured run is the window before the shutdown.
  const shutdownMs = performance.now() - stoppedAt;
  const files = readdirSync(profileDir).filter((file) => file.endsWith(".cpuprofile"));
  // File names end in .<pid>.<thread id>.<sequence>.cpuprofile; thread 0 is the main thread, the others workers.
  const byThreadId = new Map(files.map((file) => [Number(file.split(".").at(-3)), join(profileDir, file)]));
  const workerFiles = [...byThreadId].filter(([threadId]) => threadId !== 0).map(([, file]) => file);
  const others = cpu.filter((thread) => !thread.main && thread.name !== "v8:ProfEvntProc");
  const threads: ThreadProfile[] = [];
  const mainCpu = cpu.find((thread) => thread.main);
  const mainFile = byThreadId.get(0);
  if (mainCpu) threads.push({ cpuMs: mainCpu.ms, role: "main", profile: mainFile === undefined ? undefined : profileStages(mainFile, measuredMs, shutdownMs) });
  // /proc names every thread "node": the busiest ones are taken to be the workers, the rest V8's helpers.
  others.forEach((thread, index) => {
    const file = workerFiles[index];
    threads.push({ cpuMs: thread.ms, role: file === undefined ? "helper" : "worker", profile: file === undefined ? undefined : profileStages(file, measuredMs, shutdownMs) });
  });
  const stages = stagesPerRequest(threads, result.requests);
  const totalUs = threads.reduce((sum, thread) => sum + thread.cpuMs, 0) * 1000 / Math.max(1, result.requests);
  return { ...labels, requests: result.requests, rps: result.rps, totalUs, stages };
}
