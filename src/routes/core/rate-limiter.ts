/**
 * Fixed one-second windows per subject (a key or a client address). Cheap enough for the hot path: one Map lookup
 * and an increment; the map is swept every window so that idle subjects do not accumulate.
 */
export class RateLimiter {
  private counts = new Map<string, number>();
  private windowStart = 0;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** False when no limit is set: callers can then skip working out the subject. */
  get enabled(): boolean {
    return this.perSecond > 0;
  }

  /** True when the subject may proceed; false past its budget for the current second. */
  allow(subject: string): boolean {
    if (this.perSecond <= 0) return true;
    const now = this.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now - (now % 1000);
      this.counts = new Map();
    }
    const used = (this.counts.get(subject) ?? 0) + 1;
    this.counts.set(subject, used);
    return used <= this.perSecond;
  }

  /** Seconds until the current window ends, rounded up, for Retry-After. */
  retryAfterSeconds(): number {
    return Math.max(1, Math.ceil((this.windowStart + 1000 - this.now()) / 1000));
  }
}
