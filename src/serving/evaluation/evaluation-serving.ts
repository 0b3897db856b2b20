import { preferredEncoding } from "../../evaluation/answer-encoding.js";
import type { EvaluationCache } from "./evaluation-cache.js";
import type { EvaluateJob, JobResult } from "../protocol.js";
import type { TrackingLog } from "../tracking/tracking-log.js";

/** What runs an evaluation job: the executor (a worker pool, or inline on this thread). */
export interface EvaluationRunner {
  run(job: EvaluateJob): Promise<JobResult>;
  /** Inline only: evaluates at once on the calling thread (the body may be a transient view). */
  evaluateNow?(job: EvaluateJob): JobResult;
}

export interface EvaluationServingParts {
  runner: EvaluationRunner;
  /** `/features/enabled` logs an `evaluate` feature event per enabled feature: its evaluations go through the log. */
  trackingLog: TrackingLog;
  cache: EvaluationCache;
  flagStates: { current(environmentId: string): number };
  config: { evaluationCacheMs: number; compressMinBytes: number };
  /** Read-your-writes for remote context: resolves once the environment's acknowledged attribute calls are projected. */
  attributeWrites: { projected(environmentId: string): Promise<void> | undefined };
}

/**
 * `GET /features/evaluated` and `/features/enabled` from a request's environment, query and Accept-Encoding to a
 * ready answer: the answer cache, the job, where it runs, and the tracking log for `/features/enabled`'s events.
 */
export class EvaluationServing {
  constructor(private readonly parts: EvaluationServingParts) {}

  /**
   * Synchronous when the answer is remembered, and when the executor evaluates inline: a context answered at once
   * costs no promise, and its bytes go to the front end straight from the evaluator's buffer.
   */
  evaluate(environmentId: string, query: string, acceptEncoding: string | undefined, onlyEnabled: boolean): JobResult | Promise<JobResult> {
    return this.afterAttributes(environmentId, () => this.evaluateNow(environmentId, query, acceptEncoding, onlyEnabled));
  }

  /**
   * Runs `read` once the user and company calls acknowledged in the environment before it are projected (at once when
   * none wait): their attributes fill its context (remote context), and the answer cache and attribute epoch it
   * consults change with that projection, so it starts after it.
   */
  afterAttributes<T>(environmentId: string, read: () => T | Promise<T>): T | Promise<T> {
    const attributes = this.parts.attributeWrites.projected(environmentId);
    if (attributes === undefined) return read();
    // Read in a promise reaction, the answer reaches the socket a microtask later, and the reactions of other reads
    // waiting on the same projection run in between: an inline evaluation's transient body would be their bytes by then.
    return attributes.then(() => keptBody(read()));
  }

  /**
   * An OpenFeature (OFREP) job, built by its route (inside `afterAttributes`): the same runner and ruleset as
   * `evaluate`. A single-flag evaluation logs its `check` event through the tracking log as `/features/enabled` does;
   * a bulk one records nothing and may run inline.
   */
  evaluateOfrep(job: EvaluateJob, logsAccess: boolean): JobResult | Promise<JobResult> {
    if (logsAccess) return this.parts.trackingLog.evaluateEnabled(job);
    const { runner } = this.parts;
    return runner.evaluateNow !== undefined ? runner.evaluateNow(job) : runner.run(job);
  }

  private evaluateNow(environmentId: string, query: string, acceptEncoding: string | undefined, onlyEnabled: boolean): JobResult | Promise<JobResult> {
    const { cache: answers, runner, config } = this.parts;
    const flagStateVersion = this.parts.flagStates.current(environmentId);
    // `/features/enabled` records feature events on every call, so only `/features/evaluated` is answered from memory.
    const cache = onlyEnabled || !answers.consult() ? undefined : answers;
    const encoding = preferredEncoding(acceptEncoding);
    // Compressed and plain answers of one query are different entries.
    const cacheKey = encoding === undefined ? query : `${query}\u0000${encoding}`;
    const cached = cache?.get(environmentId, cacheKey, flagStateVersion);
    // Answers share the remembered headers object: nothing edits a response's headers in place (withCors replaces them).
    if (cached) return { status: cached.status, headers: cached.headers, body: cached.body };
    const attributeEpoch = answers.attributeEpoch(environmentId);
    const job: EvaluateJob = {
      kind: "evaluate",
      environmentId,
      minFlagStateVersion: flagStateVersion,
      query,
      onlyEnabled,
      attributeEpoch,
      attributeCacheMs: config.evaluationCacheMs,
      ...(encoding !== undefined ? { encoding, compressMinBytes: config.compressMinBytes } : {}),
    };
    if (onlyEnabled) return this.parts.trackingLog.evaluateEnabled(job);
    const remember = (answer: JobResult): JobResult => {
      cache?.put(environmentId, cacheKey, flagStateVersion, attributeEpoch, { status: answer.status, body: answer.body, headers: answer.headers ?? {} });
      return answer;
    };
    if (runner.evaluateNow !== undefined) return remember(runner.evaluateNow(job));
    return runner.run(job).then(remember);
  }

  /** The environment's attribute epoch (see evaluation-cache.ts), for reads that must not see stale attributes. */
  attributeEpoch(environmentId: string): number {
    return this.parts.cache.attributeEpoch(environmentId);
  }

  /** Stored attributes changed (projected): remembered answers under the old ones are no longer used. */
  attributesChanged(environmentId: string): void {
    this.parts.cache.attributesChanged(environmentId);
  }
}

/** An answer whose body outlives the next evaluation: a transient one (a view of the writer's buffer) copied. */
function keptBody<T>(value: T): T {
  const answer = value as Partial<JobResult> | undefined;
  if (answer?.transient !== true || !(answer.body instanceof Uint8Array)) return value;
  return { ...answer, body: answer.body.slice(), transient: false } as T;
}
