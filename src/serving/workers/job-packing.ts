/**
 * A batch's jobs as one flat array of primitives for the message to a worker. The structured clone writes every
 * property name of every object it copies; a `/features/evaluated` job written as nine array slots instead of an
 * object of nine named properties costs the main thread about half as much to send, and the worker less to read
 * (docs/BENCHMARKS.md, "Figures behind the code"). Tracking jobs, whose bodies dwarf their names, travel as they are.
 */
import type { EvaluateJob, Job } from "../protocol.js";

/** A packed batch: per evaluation job EVALUATE and its fields in FIELD order, per other job OTHER and the job itself. */
export type PackedJobs = unknown[];

const EVALUATE = 1;
const OTHER = 0;

/** Appends `job`'s slots. Absent optional fields are null (the clone keeps null; undefined slots would be holes). */
function packEvaluate(packed: PackedJobs, job: EvaluateJob): void {
  const { ofrep } = job;
  packed.push(
    EVALUATE,
    job.environmentId,
    job.minFlagStateVersion,
    job.query,
    job.onlyEnabled,
    job.attributeEpoch,
    job.attributeCacheMs,
    job.encoding ?? null,
    job.compressMinBytes ?? null,
    ofrep === undefined ? null : (ofrep.flagKey ?? null),
    ofrep === undefined ? null : (ofrep.publishableKey ?? null),
    ofrep === undefined ? null : ofrep.body,
    ofrep === undefined ? null : (ofrep.contentType ?? null),
    ofrep !== undefined,
  );
}

export function packJobs(jobs: readonly Job[]): PackedJobs {
  const packed: PackedJobs = [];
  for (const job of jobs) {
    if (job.kind === "evaluate") packEvaluate(packed, job);
    else packed.push(OTHER, job);
  }
  return packed;
}

export function unpackJobs(packed: PackedJobs): Job[] {
  const jobs: Job[] = [];
  let at = 0;
  while (at < packed.length) {
    if (packed[at++] === OTHER) {
      jobs.push(packed[at++] as Job);
      continue;
    }
    const job: EvaluateJob = {
      kind: "evaluate",
      environmentId: packed[at] as string,
      minFlagStateVersion: packed[at + 1] as number,
      query: packed[at + 2] as string,
      onlyEnabled: packed[at + 3] as boolean,
      attributeEpoch: packed[at + 4] as number,
      attributeCacheMs: packed[at + 5] as number,
    };
    if (packed[at + 6] !== null) job.encoding = packed[at + 6] as NonNullable<EvaluateJob["encoding"]>;
    if (packed[at + 7] !== null) job.compressMinBytes = packed[at + 7] as number;
    if (packed[at + 12] === true) {
      const ofrep: NonNullable<EvaluateJob["ofrep"]> = { body: packed[at + 10] as Uint8Array | null, contentType: (packed[at + 11] as string | null) ?? undefined };
      if (packed[at + 8] !== null) ofrep.flagKey = packed[at + 8] as string;
      if (packed[at + 9] !== null) ofrep.publishableKey = packed[at + 9] as string;
      job.ofrep = ofrep;
    }
    jobs.push(job);
    at += 13;
  }
  return jobs;
}
