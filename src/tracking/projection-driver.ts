import { ServiceError } from "../errors/catalogue.js";
import type { KvStore } from "../storage/kv.js";
import type { AppendTally } from "./append-tally.js";
import type { ProjectionStep } from "./projector.js";
import { lastAppended } from "./tracking-log-table.js";
import { AttributeWrites } from "./attribute-writes.js";

/** What the routes ask of the projection: admission by lag, and reads that wait for what came before them. */
export interface ProjectionGate {
  /**
   * Throws a retryable 503 (PROJECTION_BEHIND) while the projection is further behind than the bound. A batch
   * (`mayHold`: /bulk, feature events) arriving while it is behind by more than a fifth of the bound is held: the
   * promise returned resolves once a step brought the lag under that fifth, so batch senders slow down to what the
   * projection keeps up with before anything is refused. Single calls are not held: their projection is small.
   */
  admit(mayHold: boolean): Promise<void> | undefined;
  /** After a tracking call was acknowledged or evaluate events were appended: there is something to project. */
  appended(): void;
  /**
   * Resolves once everything appended before the call is projected; undefined when it already is (no wait). Rejects
   * with a retryable 503 past the read wait bound.
   */
  caughtUp(): Promise<void> | undefined;
  /** Read-your-writes for remote context (attribute-writes.ts): what evaluation waits for, bounded, before it reads. */
  readonly attributeWrites: AttributeWrites;
  /** How far behind the projection is, for /metrics and /health. */
  status(): ProjectionStatus;
}

export interface ProjectionStatus {
  /** Age of the oldest unprojected call (ms); 0 when caught up. */
  lagMs: number;
  /** Log records appended and not yet projected. */
  backlog: number;
  position: number;
}

export interface ProjectionDriverOptions {
  store: KvStore;
  tally: AppendTally;
  /** One projection step: a transaction on a worker, or on this thread. */
  step(): Promise<ProjectionStep>;
  /** After each step that applied something. */
  onProjected(step: ProjectionStep): void;
  /** Tracking calls are refused while the oldest unprojected one is older than this. */
  maxLagMs: number;
  /** How long a read waits for the projection before a retryable 503. */
  readWaitMs: number;
  onFault(error: unknown): void;
}

/** While an unawaited append is in flight, how often the driver looks whether it committed. */
const IN_FLIGHT_POLL_MS = 1;
/** After a failed step, before the next try. */
const RETRY_MS = 100;
/**
 * A step for new appends starts at most this often while nothing waits for it: a step has a fixed cost (a task
 * to a worker and back, a transaction), which a few calls each could not carry. A backlog, a read or a shutdown
 * waiting for the projection start the next step at once.
 */
const STEP_PACE_MS = 10;

interface Waiter {
  position: number;
  resolve(): void;
}

/** A tracking call held back while the projection is behind (see admit). */
interface HeldCall {
  resolve(): void;
  reject(error: ServiceError): void;
}

/** Batches are held back, not yet refused, while the lag exceeds this share of the bound (see admit). */
const HOLD_SHARE = 0.2;

/**
 * Runs the projector on the main thread's schedule: one step at a time, again and again while the log is ahead of
 * it, and not at all while nothing was appended. Knows how far it got from each step's answer, so deciding whether a
 * read must wait costs a comparison.
 */
export class ProjectionDriver implements ProjectionGate {
  private running = false;
  private again = false;
  private position: number;
  private appendedSeen: number;
  /**
   * The lag is the age of the oldest unprojected call, known from three places: the oldest record a step left
   * behind (its arrival time), the first append notified while the running step was being prepared (that step
   * covers it), and the first notified since a step started (the next step covers it).
   */
  private oldestUnprojectedAt: number | null = null;
  private runningStepCovers: number | null = null;
  private firstAppendSinceStepStart: number | null = null;
  private committedAtStart: number;
  private readonly waiters: Waiter[] = [];
  private held: HeldCall[] = [];
  private stopped = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private pacedTimer: NodeJS.Timeout | undefined;
  private lastStepEndedAt = 0;
  readonly attributeWrites: AttributeWrites;

  constructor(private readonly options: ProjectionDriverOptions, start: { position: number; appended: number }) {
    this.position = start.position;
    this.appendedSeen = start.appended;
    this.committedAtStart = options.tally.committedTotal();
    this.attributeWrites = new AttributeWrites(() => this.caughtUp(), options.maxLagMs);
    if (this.position < this.appendedSeen) {
      this.firstAppendSinceStepStart = Date.now();
      this.schedule();
    }
  }

  admit(mayHold: boolean): Promise<void> | undefined {
    const lag = this.lagMs();
    if (lag > this.options.maxLagMs) throw this.lagRefusal(lag);
    if (!mayHold || lag <= this.options.maxLagMs * HOLD_SHARE || !this.running) return undefined;
    // Backpressure: with the projection on a thread of its own, appends would otherwise outrun it until refused.
    return new Promise<void>((resolve, reject) => {
      const call: HeldCall = { resolve, reject };
      this.held.push(call);
      // Steps failing over and over must not hold a call for ever: after the bound's length it is refused.
      setTimeout(() => {
        const index = this.held.indexOf(call);
        if (index >= 0) this.held.splice(index, 1)[0]!.reject(this.lagRefusal(this.lagMs()));
      }, this.options.maxLagMs).unref();
    });
  }

  appended(): void {
    this.firstAppendSinceStepStart ??= Date.now();
    this.schedulePaced();
  }

  caughtUp(): Promise<void> | undefined {
    if (this.isCaughtUp()) return undefined;
    return this.waitForMark(this.options.tally.startedMark(), Date.now() + this.options.readWaitMs);
  }

  status(): ProjectionStatus {
    // The log's newest record as committed now (one key read), not as the last step saw it.
    this.options.store.refresh();
    this.appendedSeen = Math.max(this.appendedSeen, lastAppended(this.options.store));
    return { lagMs: this.lagMs(), backlog: Math.max(0, this.appendedSeen - this.position), position: this.position };
  }

  /** Resolves once every append committed so far is projected (shutdown, tools); no bound. */
  async drain(): Promise<void> {
    this.options.store.refresh();
    const target = lastAppended(this.options.store);
    if (this.position >= target) return;
    await new Promise<void>((resolve) => {
      this.waiters.push({ position: target, resolve });
      this.schedule();
    });
  }

  stop(): void {
    this.stopped = true;
    for (const call of this.held.splice(0)) call.reject(this.lagRefusal(this.lagMs()));
    clearTimeout(this.pollTimer);
    clearTimeout(this.pacedTimer);
  }

  private lagMs(): number {
    let since = Number.POSITIVE_INFINITY;
    for (const at of [this.oldestUnprojectedAt, this.runningStepCovers, this.firstAppendSinceStepStart]) if (at !== null && at < since) since = at;
    return since === Number.POSITIVE_INFINITY ? 0 : Math.max(0, Date.now() - since);
  }

  private isCaughtUp(): boolean {
    const { tally } = this.options;
    return (
      !this.running &&
      this.firstAppendSinceStepStart === null &&
      this.oldestUnprojectedAt === null &&
      !tally.inFlight() &&
      tally.committedTotal() === this.committedAtStart
    );
  }

  private async waitForMark(mark: Int32Array, deadline: number): Promise<void> {
    const { tally, store } = this.options;
    // Evaluate events appended before this read are committed first (usually within a millisecond).
    while (!tally.reached(mark)) {
      if (Date.now() > deadline) throw this.readTimeout();
      await new Promise((resolve) => setTimeout(resolve, IN_FLIGHT_POLL_MS));
    }
    store.refresh();
    const target = lastAppended(store);
    if (this.position >= target) return;
    let waiter: Waiter | undefined;
    const reached = new Promise<void>((resolve) => {
      waiter = { position: target, resolve };
      this.waiters.push(waiter);
    });
    this.schedule();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.readTimeout()), Math.max(0, deadline - Date.now()));
    });
    try {
      await Promise.race([reached, timedOut]);
    } finally {
      clearTimeout(timer);
      const index = this.waiters.indexOf(waiter!);
      if (index >= 0) this.waiters.splice(index, 1);
    }
  }

  private lagRefusal(lag: number): ServiceError {
    return new ServiceError("PROJECTION_BEHIND", `The projection is ${Math.round(lag)} ms behind the tracking log (the bound is ${this.options.maxLagMs} ms); retry later.`, undefined, 1);
  }

  /** After a step: held calls go on once the lag is back under the hold share, or are refused past the bound. */
  private releaseHeld(): void {
    if (this.held.length === 0) return;
    const lag = this.lagMs();
    if (lag > this.options.maxLagMs * HOLD_SHARE && this.running) {
      if (lag <= this.options.maxLagMs) return;
      const error = this.lagRefusal(lag);
      for (const call of this.held.splice(0)) call.reject(error);
      return;
    }
    for (const call of this.held.splice(0)) call.resolve();
  }

  private readTimeout(): ServiceError {
    return new ServiceError("PROJECTION_BEHIND", `What was tracked before this read is not projected yet (waited ${this.options.readWaitMs} ms); retry later.`, undefined, 1);
  }

  /** A step for new appends: at once if the last one ended long enough ago or something waits, else a little later. */
  private schedulePaced(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    const wait = this.lastStepEndedAt + STEP_PACE_MS - Date.now();
    if (wait <= 0 || this.waiters.length > 0) this.schedule();
    else this.pacedTimer ??= setTimeout(() => this.schedule(), wait);
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.pacedTimer);
    this.pacedTimer = undefined;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.again = false;
    this.committedAtStart = this.options.tally.committedTotal();
    // Everything acknowledged before now is committed, so this step's transaction sees it.
    this.runningStepCovers = this.firstAppendSinceStepStart;
    this.firstAppendSinceStepStart = null;
    this.options.step().then(
      (step) => this.stepped(step),
      (error: unknown) => {
        this.options.onFault(error);
        this.running = false;
        this.firstAppendSinceStepStart = minimum(this.firstAppendSinceStepStart, this.runningStepCovers);
        this.runningStepCovers = null;
        this.pollTimer = setTimeout(() => this.schedule(), RETRY_MS);
      },
    );
  }

  private stepped(step: ProjectionStep): void {
    this.running = false;
    this.lastStepEndedAt = Date.now();
    this.runningStepCovers = null;
    this.position = step.position;
    this.appendedSeen = Math.max(this.appendedSeen, step.appended);
    this.oldestUnprojectedAt = step.oldestUnprojectedAt;
    if (step.records > 0) this.options.onProjected(step);
    for (let index = this.waiters.length - 1; index >= 0; index--) {
      if (this.waiters[index]!.position <= this.position) this.waiters.splice(index, 1)[0]!.resolve();
    }
    const { tally } = this.options;
    if (step.position < step.appended) {
      this.schedule();
      this.releaseHeld();
      return;
    }
    this.releaseHeld();
    if (this.again || tally.committedTotal() !== this.committedAtStart) {
      this.again = false;
      this.schedulePaced();
      return;
    }
    if (tally.inFlight()) {
      // An unawaited append is on its way to the log: look again shortly rather than wait for the next call.
      this.pollTimer = setTimeout(() => this.schedule(), IN_FLIGHT_POLL_MS);
    }
  }
}

function minimum(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}
