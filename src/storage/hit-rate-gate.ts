/**
 * Decides whether a cache is worth consulting, from its own hit rate. A cache costs something on every miss (the
 * lookups, the insert, the garbage of what it drops); when what it holds rarely comes back — contexts never seen
 * twice, rollouts on user ids under real traffic — it costs more than it saves. The gate watches windows of `sample`
 * lookups and, when fewer than `breakEven` of them hit, closes for the next `bypass` lookups; then it samples again.
 * Each window that fails again doubles the bypass (up to 64 times), so that steady traffic of one-off values pays
 * for sampling less and less; a window that passes resets it.
 */
export class HitRateGate {
  private sampled = 0;
  private hits = 0;
  private bypassLeft = 0;
  private nextBypass: number;
  /** Whether the last finished window reached break-even; undefined before the first one finished. */
  lastWindowPassed: boolean | undefined;
  /** Lookups asked about so far (open() calls), consulted or not. */
  lookups = 0;

  constructor(
    private readonly breakEven: number,
    // A window must be longer than the reuse distance it is to notice: a cache emptied (or cold) gets its first hit
    // only when a value comes round again, so a window shorter than the traffic's round of users sees almost no hits
    // and closes for good (docs/BENCHMARKS.md, "Figures behind the code"). 4,096 notices reuse within a few thousand lookups.
    private readonly sample = 4 * 1_024,
    private readonly bypass = 16 * 1_024,
    private readonly maxBypass = 64 * bypass,
  ) {
    this.nextBypass = bypass;
  }

  /** Whether to use the cache for this lookup. When it answers true, report the lookup's outcome with `record`. */
  open(): boolean {
    this.lookups++;
    if (this.bypassLeft === 0) return true;
    this.bypassLeft--;
    return false;
  }

  /** The outcome of a lookup made while open; answers true when the gate has just closed (drop what is held). */
  record(hit: boolean): boolean {
    if (hit) this.hits++;
    if (++this.sampled < this.sample) return false;
    const closing = this.hits < this.sample * this.breakEven;
    this.lastWindowPassed = !closing;
    if (closing) {
      this.bypassLeft = this.nextBypass;
      this.nextBypass = Math.min(this.maxBypass, this.nextBypass * 2);
    } else this.nextBypass = this.bypass;
    this.sampled = 0;
    this.hits = 0;
    return closing;
  }

  /** Whether lookups are being skipped now; for tests and metrics. */
  get bypassing(): boolean {
    return this.bypassLeft > 0;
  }
}
