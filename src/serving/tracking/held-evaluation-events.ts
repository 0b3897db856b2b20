import type { KvStore } from "../../storage/kv.js";
import type { AppendTallySlot } from "../../tracking/append-tally.js";
import { evaluationCount } from "../../tracking/evaluations.js";
import type { LoggedRequest } from "../../tracking/project-requests.js";
import { appendToTrackingLog, trackingLogStore } from "../../tracking/tracking-log-table.js";

/** How long the first held request waits for others to share its append. */
const HOLD_MS = 10;
/** Feature events that make an append worth committing at once. */
const FLUSH_AT_EVENTS = 2_000;

/**
 * Feature events nobody waits for (`/features/enabled`'s `evaluate` events, OFREP's `check` events), held for a few
 * milliseconds so that the requests of many batches share one append: one record, one commit and one projection step
 * instead of one per batch (docs/BENCHMARKS.md, "Held evaluation events"). Held events count as started in the
 * thread's append tally from the moment they are held, so a read that must see them waits for them, and so does the
 * service's shutdown (main.ts). A batch with acknowledged tracking calls takes what is held into its own append,
 * ahead of its calls: one thread's records keep the order its requests came in.
 */
export class HeldEvaluationEvents {
  private held: LoggedRequest[] = [];
  private heldEvents = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private onFault: (error: unknown) => void = () => {};

  constructor(
    private readonly store: KvStore,
    private readonly tally: AppendTallySlot,
  ) {}

  /** Holds requests carrying only unawaited events; they are appended within HOLD_MS. */
  hold(requests: readonly LoggedRequest[], onFault: (error: unknown) => void): void {
    this.onFault = onFault;
    if (this.held.length === 0) {
      this.tally.started();
      // A failed append is reported through onFault (settleTally); the promise has nobody else to tell.
      this.timer = setTimeout(() => void this.flush().catch(() => {}), HOLD_MS);
    }
    for (const request of requests) {
      this.held.push(request);
      this.heldEvents += request.evaluations === undefined ? 0 : evaluationCount(request.evaluations);
    }
    if (this.heldEvents >= FLUSH_AT_EVENTS) void this.flush().catch(() => {});
  }

  /**
   * Appends `requests` after whatever is held, in one transaction; the answer is the commit. What was held is
   * counted finished in the tally once that commit is done (or failed: it will never be).
   */
  appendWithHeld(requests: readonly LoggedRequest[]): Promise<number> {
    const held = this.take();
    const all = held.length === 0 ? requests : [...held, ...requests];
    const store = this.store;
    const committed = trackingLogStore(store).write(() => appendToTrackingLog(store, all));
    if (held.length > 0) this.settleTally(committed);
    return committed;
  }

  /** Appends what is held now, without waiting for more; resolves once that is committed (at once when none is held). */
  flush(): Promise<void> {
    if (this.held.length === 0) return Promise.resolve();
    return this.appendWithHeld([]).then(() => undefined);
  }

  private take(): LoggedRequest[] {
    clearTimeout(this.timer);
    this.timer = undefined;
    const held = this.held;
    this.held = [];
    this.heldEvents = 0;
    return held;
  }

  private settleTally(committed: Promise<unknown>): void {
    const onFault = this.onFault;
    committed.then(
      () => this.tally.finished(),
      (error: unknown) => {
        this.tally.finished();
        onFault(error);
      },
    );
  }
}
