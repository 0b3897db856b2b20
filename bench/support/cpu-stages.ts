/**
 * Where a request's CPU goes, stage by stage, from the service's own CPU profiles (`node --cpu-prof`, one file per
 * thread) and the CPU each thread spent (from /proc, see thread-cpu.ts).
 *
 * A profile sample shows the JavaScript stack of one thread at one instant; the sample is put in the stage of the
 * first frame, from the leaf up, that a stage claims (so rollout hashing called from a filter counts as hashing). V8
 * books native work done outside JavaScript — uWebSockets.js reading and writing sockets, the kernel under it — as
 * "(idle)"; the thread's CPU from /proc that the JavaScript samples do not account for is that native work, given to
 * the transport stage on the main thread and to "native (store reads, commits)" on a worker. Samples are taken on
 * the clock, so a thread preempted while in JavaScript collects samples without CPU: a thread's stages are then scaled
 * to its CPU. Threads without JavaScript are V8's garbage collector helpers.
 */
import { readFileSync } from "node:fs";

export const STAGES = [
  "HTTP transport and response write",
  "key resolution",
  "query parse",
  "answer cache",
  "remote context",
  "evaluation (rules)",
  "rollout hashing",
  "serialisation",
  "thread hop",
  "native (store reads, commits)",
  "garbage collection",
  "other",
] as const;
export type Stage = (typeof STAGES)[number];

/** Claims, tried from the leaf frame up: [stage, file pattern, function name pattern (optional)]. */
const CLAIMS: [Stage, RegExp, RegExp?][] = [
  ["rollout hashing", /rollout-hasher|sha256x4|rollout-slots|rollout-hash\.js|^wasm:/],
  ["rollout hashing", /node:internal\/crypto\/hash/],
  ["serialisation", /answer-writer/, /^(writeAnswer|encodeItem|headOf|remember|resultOf|booleansOf|decodeMissing|item)$/],
  ["serialisation", /serialize-evaluation|answer-encoding|node:zlib|evaluated-feature/],
  ["evaluation (rules)", /compile-filter|operators|answer-writer|evaluate-ruleset|node:internal\/date/],
  ["remote context", /remote-context|stored-entity|tracking\/reader|attribute-cache|flatten-context|lmdb\/|msgpackr\/|storage\/lmdb-store|opt-in-store/],
  ["query parse", /flat-query|context-from-query|node:internal\/url|node:querystring/],
  ["answer cache", /evaluation-cache|bounded-map|hit-rate-gate/],
  ["key resolution", /(api|routes\/core)\/auth|key-index|tenancy\/identifiers/],
  ["thread hop", /workers\/[a-z-]*executor|result-packing|piscina|worker_pool|task_queue|node:internal\/worker|messageport|node:worker_threads|^worker\.js$|^index\.js$|common\.js/],
  ["HTTP transport and response write", /uws-front-end|node-front-end|(api|routes\/core)\/(core|router|cors)|http\/(run-decision|responses)/],
  ["evaluation (rules)", /(jobs|evaluation)\/(evaluate-job|ruleset-cache)|(jobs|serving)\/run-job|evaluation-serving|sdk\/evaluation-routes/],
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Milliseconds of each stage in one profile's last `windowMs` (the measured run), and the samples' total. */
export interface ProfileStages {
  /** JavaScript (and GC) time per stage, ms. */
  stages: Map<Stage, number>;
  /** Sampled time the thread was in JavaScript or GC, ms. */
  activeMs: number;
  /** Whether any JavaScript ran (threads without are GC helpers). */
  hasJavaScript: boolean;
}

/** Reads one thread's profile; `endSlackMs` skips the shutdown at its end, `windowMs` is the measured run. */
export function profileStages(file: string, windowMs: number, endSlackMs: number): ProfileStages {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stageOf = new Map<number, Stage | "idle">();
  const classify = (id: number): Stage | "idle" => {
    const known = stageOf.get(id);
    if (known !== undefined) return known;
    const leaf = byId.get(id)!.callFrame.functionName;
    let stage: Stage | "idle" = "other";
    // A worker blocked in Atomics.wait (Piscina's idle loop) shows as that function: waiting, not working.
    if (leaf === "(idle)" || leaf === "(program)" || leaf === "(root)" || leaf === "atomicsWaitLoop") stage = "idle";
    else if (leaf === "(garbage collector)") stage = "garbage collection";
    else {
      search: for (let current: number | undefined = id; current !== undefined; current = parent.get(current)) {
        const frame = byId.get(current)!.callFrame;
        const url = frame.url.replace(/^.*\/(dist|node_modules)\//, "");
        for (const [claim, file, name] of CLAIMS) {
          if (file.test(url) && (name === undefined || name.test(frame.functionName))) {
            stage = claim;
            break search;
          }
        }
      }
    }
    stageOf.set(id, stage);
    return stage;
  };
  const stages = new Map<Stage, number>(STAGES.map((stage) => [stage, 0]));
  const windowEnd = profile.endTime - endSlackMs * 1000;
  const windowStart = windowEnd - windowMs * 1000;
  let time = profile.startTime;
  let activeMs = 0;
  let hasJavaScript = false;
  for (let index = 0; index < profile.samples.length; index++) {
    time += profile.timeDeltas[index]!;
    const stage = classify(profile.samples[index]!);
    if (stage !== "idle" && stage !== "garbage collection") hasJavaScript = true;
    if (time < windowStart || time > windowEnd || stage === "idle") continue;
    const ms = (profile.timeDeltas[index + 1] ?? profile.timeDeltas[index]!) / 1000;
    stages.set(stage, stages.get(stage)! + ms);
    activeMs += ms;
  }
  return { stages, activeMs, hasJavaScript };
}

export interface ThreadProfile {
  /** The thread's CPU over the measured run, ms (from /proc). */
  cpuMs: number;
  role: "main" | "worker" | "helper";
  profile: ProfileStages | undefined;
}

/** µs of CPU per request for each stage, over every thread. */
export function stagesPerRequest(threads: readonly ThreadProfile[], requests: number): Record<Stage, number> {
  const total = Object.fromEntries(STAGES.map((stage) => [stage, 0])) as Record<Stage, number>;
  for (const thread of threads) {
    if (thread.role === "helper" || thread.profile === undefined) {
      total["garbage collection"] += thread.cpuMs;
      continue;
    }
    // Samples are taken on the clock, not on the CPU: a thread waiting for the core (the other threads, the load
    // generator) still gets samples. When they add up to more than the thread's CPU they are scaled down to it;
    // when to less, the rest is native work outside JavaScript.
    const scale = thread.profile.activeMs > thread.cpuMs ? thread.cpuMs / thread.profile.activeMs : 1;
    for (const [stage, ms] of thread.profile.stages) total[stage] += ms * scale;
    const native = Math.max(0, thread.cpuMs - thread.profile.activeMs);
    total[thread.role === "main" ? "HTTP transport and response write" : "native (store reads, commits)"] += native;
  }
  for (const stage of STAGES) total[stage] = (total[stage] * 1000) / Math.max(1, requests);
  return total;
}
