/**
 * Runs one soak stream in a process of its own and prints its figures as JSON: three streams in one process shared
 * one event loop, so a request answered in time could still be read late, and every stream's p99 carried the others'
 * load. The process also reports its own event-loop delay, so a slow generator shows as such.
 * Arguments: one JSON object `{url, spec, seconds, rate?}`.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { runStream } from "./load-streams.js";
import { streamOf } from "./soak-streams.js";
import type { StreamSpec } from "./stream-spec.js";

const { url, spec, seconds, rate } = JSON.parse(process.argv[2]!) as { url: string; spec: StreamSpec; seconds: number; rate?: number };
/** The monitor's timer period: its figures include it, so it is taken off what is reported. */
const RESOLUTION_MS = 10;
const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
delay.enable();
const figures = await runStream(url, streamOf(spec), seconds, rate);
delay.disable();
process.stdout.write(`${JSON.stringify({ ...figures, generatorLoopDelayP99Ms: Math.max(0, Math.round(delay.percentile(99) / 1e4 - RESOLUTION_MS * 100) / 100) })}\n`);
