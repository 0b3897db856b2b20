/**
 * The deliveries-under-load bench's summary: deliveries per second in B and C, whether the backlog held, and B
 * against A for every load figure, with the spread between rounds so that "beyond noise" can be judged.
 */
import type { StreamFigures } from "../support/load-streams.js";
import { median, spread } from "../support/stats.js";

export interface PhaseRun {
  phase: "A" | "B" | "C";
  round: number;
  elapsedSeconds: number;
  streams: Record<string, StreamFigures>;
  changesCommitted: number;
  changesFailed: number;
  firstChangeFailure?: string;
  /** Distinct deliveries received during the phase. */
  delivered: number;
  deliveriesPerSecond: number;
  /** Deliveries queued by committed changes and not yet received. */
  backlogAtStart: number;
  backlogAtEnd: number;
  /** The backlog every 250 ms over the phase (changes in flight not counted). */
  backlogSamples: number[];
  /** After the phase, until the backlog was empty (NaN: it had not drained within the limit). */
  drainSeconds: number;
  /** The service's CPU over the phase, every thread. */
  cpuMs: number;
  /** Requests the load streams were served over the phase. */
  loadRequests: number;
  cpuUsPerLoadRequest: number;
  cpuUsPerChange: number;
}

export interface RunSetting {
  offered: Record<string, number>;
  maxima: Record<string, number>;
  busyChanges: string;
  aloneChanges: string;
  webhooks: number;
  seconds: number;
  signatures: { verified: number; bad: string[]; duplicates: number };
}

/** B against A for one figure: the ratio of medians, each round's ratio, and A's own spread between rounds. */
export interface Effect {
  figure: string;
  medianA: number;
  medianB: number;
  /** median(B) / median(A). */
  ratio: number;
  /** B / A of each round, lowest and highest. */
  roundRatios: { min: number; max: number };
  /** (max − min) / median of A over the rounds, in percent: the noise the ratio is judged against. */
  spreadAPercent: number;
  spreadBPercent: number;
  /** |ratio − 1| at most half A's spread, or 1 between the rounds' lowest and highest ratio. */
  withinNoise: boolean;
}

function effectOf(figure: string, a: number[], b: number[]): Effect {
  const medianA = median(a);
  const medianB = median(b);
  const ratio = medianB / medianA;
  const perRound = a.map((value, index) => b[index]! / value);
  const roundRatios = { min: Math.min(...perRound), max: Math.max(...perRound) };
  const spreadAPercent = spread(a).percent;
  const withinNoise = Math.abs(ratio - 1) * 100 <= spreadAPercent / 2 || (roundRatios.min <= 1 && roundRatios.max >= 1);
  return { figure, medianA, medianB, ratio, roundRatios, spreadAPercent, spreadBPercent: spread(b).percent, withinNoise };
}

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/**
 * Whether a phase's deliveries kept up: a backlog that grows rises through the phase, one that is sustained hovers at
 * what is in flight. Held: the last quarter's mean backlog at most 1.5 × the second quarter's, plus two per webhook
 * (one in flight and one just queued). A phase too short for four samples counts as held when it ended as it began.
 */
export function backlogHeld(run: PhaseRun, webhooks: number): boolean {
  const samples = run.backlogSamples;
  if (samples.length < 4) return run.backlogAtEnd <= run.backlogAtStart + 2 * webhooks;
  const quarter = Math.floor(samples.length / 4);
  return mean(samples.slice(-quarter)) <= 1.5 * mean(samples.slice(quarter, 2 * quarter)) + 2 * webhooks;
}

const fixed = (value: number, digits = 1) => (Number.isFinite(value) ? value.toFixed(digits) : "—");
const whole = (value: number) => (Number.isFinite(value) ? Math.round(value).toLocaleString("en") : "—");

export function summarize(runs: readonly PhaseRun[], setting: RunSetting): { text: string; json: unknown; failures: string[] } {
  const of = (phase: PhaseRun["phase"]) => runs.filter((run) => run.phase === phase);
  const [a, b, c] = [of("A"), of("B"), of("C")];
  const kinds = Object.keys(setting.offered);
  const effects: Effect[] = [];
  for (const kind of kinds) {
    effects.push(effectOf(`${kind} req/s`, a.map((run) => run.streams[kind]!.rps), b.map((run) => run.streams[kind]!.rps)));
    effects.push(effectOf(`${kind} p99 ms`, a.map((run) => run.streams[kind]!.p99), b.map((run) => run.streams[kind]!.p99)));
  }
  effects.push(effectOf("CPU µs per load request", a.map((run) => run.cpuUsPerLoadRequest), b.map((run) => run.cpuUsPerLoadRequest)));
  // B's CPU holds the changes' and deliveries' own: taken off at C's cost per change, what is left is the load's.
  const cpuPerChangeAlone = median(c.map((run) => run.cpuUsPerChange));
  const netOfChanges = (run: PhaseRun) => (run.cpuMs * 1000 - run.changesCommitted * cpuPerChangeAlone) / run.loadRequests;
  effects.push(effectOf("… net of changes (est.)", a.map((run) => run.cpuUsPerLoadRequest), b.map(netOfChanges)));

  const failures: string[] = [];
  for (const run of runs) {
    const streamErrors = Object.entries(run.streams).filter(([, figures]) => figures.errors > 0);
    for (const [kind, figures] of streamErrors) failures.push(`round ${run.round + 1} ${run.phase}: ${figures.errors} ${kind} requests failed`);
    if (run.changesFailed > 0) failures.push(`round ${run.round + 1} ${run.phase}: ${run.changesFailed} changes failed (${run.firstChangeFailure})`);
    if (Number.isNaN(run.drainSeconds)) failures.push(`round ${run.round + 1} ${run.phase}: the deliveries had not drained 120 s after the phase`);
  }
  for (const bad of setting.signatures.bad) failures.push(`signature: ${bad}`);

  const lines: string[] = [];
  lines.push(`Webhook deliveries under load: ${runs.length / 3} rounds of A, B, C, ${setting.seconds} s each; ${setting.webhooks} webhook(s) on "*"`);
  lines.push(`offered: ${kinds.map((kind) => `${kind} ${whole(setting.offered[kind]!)}/s`).join(", ")}` + (Object.keys(setting.maxima).length > 0 ? ` (maxima alone: ${kinds.map((kind) => `${kind} ${whole(setting.maxima[kind]!)}/s`).join(", ")})` : " (given)"));
  lines.push(`changes: in B ${setting.busyChanges}, in C ${setting.aloneChanges}`);
  lines.push("");
  lines.push("round phase  " + kinds.map((kind) => `${kind} req/s · p99 ms`.padStart(26)).join("") + "  changes/s  deliveries/s  backlog start→end  drain s  CPU µs/load req  CPU µs/change");
  for (const run of runs) {
    lines.push(
      `${String(run.round + 1).padStart(5)} ${run.phase.padStart(5)}  ` +
        kinds.map((kind) => (run.streams[kind] === undefined ? "—".padStart(26) : `${whole(run.streams[kind]!.rps)} · ${fixed(run.streams[kind]!.p99, 2)}`.padStart(26))).join("") +
        `${fixed(run.changesCommitted / run.elapsedSeconds).padStart(11)}${fixed(run.deliveriesPerSecond).padStart(14)}${`${run.backlogAtStart}→${run.backlogAtEnd}`.padStart(19)}${fixed(run.drainSeconds, 2).padStart(9)}` +
        `${fixed(run.cpuUsPerLoadRequest).padStart(17)}${fixed(run.cpuUsPerChange).padStart(15)}`,
    );
  }
  lines.push("");
  const deliveries = (phase: PhaseRun[]) => phase.map((run) => run.deliveriesPerSecond);
  const heldIn = (phase: PhaseRun[]) => phase.filter((run) => backlogHeld(run, setting.webhooks)).length;
  const largest = (phase: PhaseRun[]) => Math.max(0, ...phase.flatMap((run) => run.backlogSamples));
  lines.push(`deliveries/s in B (under load): median ${fixed(median(deliveries(b)))}, spread ±${fixed(spread(deliveries(b)).percent / 2)} %; backlog held (did not grow) in ${heldIn(b)} of ${b.length} rounds, largest ${largest(b)}`);
  lines.push(`deliveries/s in C (alone):      median ${fixed(median(deliveries(c)))}, spread ±${fixed(spread(deliveries(c)).percent / 2)} %; backlog held in ${heldIn(c)} of ${c.length} rounds, largest ${largest(c)}`);
  lines.push("");
  lines.push("B against A            median A    median B    B/A    rounds' B/A     A spread  B spread  verdict");
  for (const effect of effects) {
    lines.push(
      `${effect.figure.padEnd(22)}${fixed(effect.medianA, 2).padStart(10)}${fixed(effect.medianB, 2).padStart(12)}${fixed(effect.ratio, 3).padStart(7)}` +
        `${`${fixed(effect.roundRatios.min, 3)}–${fixed(effect.roundRatios.max, 3)}`.padStart(15)}${`±${fixed(effect.spreadAPercent / 2)} %`.padStart(12)}${`±${fixed(effect.spreadBPercent / 2)} %`.padStart(10)}  ${effect.withinNoise ? "within noise" : "BEYOND NOISE"}`,
    );
  }
  lines.push("");
  lines.push(`signatures verified: ${setting.signatures.verified} (a sample), failed: ${setting.signatures.bad.length}; duplicate deliveries: ${setting.signatures.duplicates}`);
  for (const failure of failures) lines.push(`FAILED ${failure}`);
  return { text: lines.join("\n"), json: { setting, runs, effects, failures }, failures };
}
