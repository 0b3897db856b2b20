/**
 * Appends that nobody waits for (the `evaluate` events of `/features/enabled`, answered before their commit), counted
 * per thread in shared memory: a read that must see them (docs/RELIABILITY.md: reads wait for what came before them)
 * takes every thread's "started" count and waits until each thread's "committed" count reaches it. A thread's
 * appends commit in the order it issued them (lmdb-js runs one thread's transactions in order), so a thread's count
 * reaching the mark means all of that thread's earlier appends are in the log. Acknowledged tracking calls need no
 * tally: their 200 follows their commit.
 *
 * Layout (Int32): [0] slots claimed, then per slot [started, committed]. Counts wrap; they are compared by difference.
 */
const SLOTS = 64;

export class AppendTally {
  readonly shared: SharedArrayBuffer;
  private readonly counts: Int32Array;

  constructor(shared: SharedArrayBuffer = new SharedArrayBuffer(4 * (1 + 2 * SLOTS))) {
    this.shared = shared;
    this.counts = new Int32Array(shared);
  }

  /** A slot for the calling thread: each thread its own, a thread started past the last slot shares the last one. */
  claim(): AppendTallySlot {
    const slot = Math.min(Atomics.add(this.counts, 0, 1), SLOTS - 1);
    return new AppendTallySlot(this.counts, 1 + 2 * slot);
  }

  /** Every slot's started count now: the mark a read waits for. */
  startedMark(): Int32Array {
    const mark = new Int32Array(SLOTS);
    for (let slot = 0; slot < SLOTS; slot++) mark[slot] = Atomics.load(this.counts, 1 + 2 * slot);
    return mark;
  }

  /** Whether every slot committed at least what it had started at `mark`. */
  reached(mark: Int32Array): boolean {
    for (let slot = 0; slot < SLOTS; slot++) {
      if (((Atomics.load(this.counts, 2 + 2 * slot) - mark[slot]!) | 0) < 0) return false;
    }
    return true;
  }

  /** The sum of every slot's committed count (it changes when an unawaited append commits). */
  committedTotal(): number {
    let total = 0;
    for (let slot = 0; slot < SLOTS; slot++) total = (total + Atomics.load(this.counts, 2 + 2 * slot)) | 0;
    return total;
  }

  /** Whether some append was started and not yet committed. */
  inFlight(): boolean {
    for (let slot = 0; slot < SLOTS; slot++) if (Atomics.load(this.counts, 1 + 2 * slot) !== Atomics.load(this.counts, 2 + 2 * slot)) return true;
    return false;
  }
}

/** One thread's pair of counts. */
export class AppendTallySlot {
  constructor(
    private readonly counts: Int32Array,
    private readonly index: number,
  ) {}

  /** Before an unawaited append is issued. */
  started(): void {
    Atomics.add(this.counts, this.index, 1);
  }

  /** Once it committed (or failed: it will never commit). */
  finished(): void {
    Atomics.add(this.counts, this.index + 1, 1);
  }
}
