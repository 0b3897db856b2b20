/**
 * `node dist/bench/serving/webhooks-under-load.js`: webhook deliveries per second sustained while the service serves
 * evaluation and tracking at their usual rates, and what the deliveries cost those. Three phases, alternated and
 * repeated on one service: A the evaluation and tracking streams alone; B the same plus a stream of targeting changes,
 * each queueing a delivery per webhook; C the changes alone. `--help` for the options.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { runStreamProcess, runStreams, type StreamFigures } from "../support/load-streams.js";
import type { StreamKind, StreamSpec } from "../support/stream-spec.js";
import { featureDefinitions, trafficEntitiesBodies } from "../support/fixtures.js";
import { BENCH_ADMIN_TOKEN, startService, tempDir } from "../support/processes.js";
import { waitCaughtUp } from "../support/projection.js";
import { call, postBulk, seedApp } from "../support/seed.js";
import { cpuBetween, threadTicks } from "../support/thread-cpu.js";
import { CHURN_FEATURE, createWebhook, startChangeStream, startCountingReceiver, type ChangePace, type CountingReceiver } from "../support/webhook-traffic.js";
import { summarize, type PhaseRun } from "./webhooks-report.js";

const USAGE = `node dist/bench/serving/webhooks-under-load.js [options]

Starts the built service on 127.0.0.1 (as the bench does, with SWITCHYARD_WEBHOOK_ALLOW=127.0.0.1/32), seeds 50
features with the bench's rules and 10,000 users x 200 companies, starts a receiver on 127.0.0.1 that answers 200,
counts deliveries by webhook-id and verifies a sample of signatures with the standardwebhooks package, and subscribes
--webhooks webhooks to every event ("*"). It measures each load stream's maximum alone (closed loop, --max-seconds),
then runs --repeats rounds of three phases of --seconds each:
  A  evaluation (GET /features/evaluated, distinct contexts), POST /event and POST /bulk (50 mixed items), each in
     its own process, open loop at the soak's usual rates: 70 % x its share (80/10/10 %) x its maximum;
  B  the same streams at the same rates, plus targeting changes (PUT .../targeting through the admin API) at
     --change-rate, each queueing one delivery per webhook;
  C  the changes alone, at --alone-change-rate.
After B and C it waits for the deliveries to drain and the projection to catch up before the next phase, and
reports how long that took. Per phase: each stream's served rate, p50/p99 and errors; changes committed; deliveries
received; the backlog (deliveries queued by committed changes and not yet received) at the phase's start and end
(sustained: it does not grow); the service's CPU (all threads, from /proc) per load request and per change.
Summary: deliveries per second in B and C, and B against A for each stream's rate and p99 and the CPU per load
request, as a ratio with the range of the per-round ratios and A's own spread between rounds (the noise).
Load only ever goes to 127.0.0.1. Exits 1 when a request or a signature failed. Linux only (/proc).

Options:
  --seconds N              length of each phase (default 10)
  --repeats N              rounds of A, B, C (default 3)
  --max-seconds N          length of each stream's maximum measurement (default 3)
  --rates E,V,B            offer these evaluation, /event, /bulk rates (requests/s) instead of measuring maxima
  --load F                 fraction of the maxima offered (default 0.7, the soak's)
  --change-rate N|max      targeting changes per second in B (default 50); max: as fast as they commit
  --alone-change-rate N|max  the same in C (default: as --change-rate; max gives the delivery ceiling alone)
  --in-flight N            writers when a rate is max (default 1: one change after the other)
  --webhooks N             webhooks subscribed to "*" (default 1; each change is a delivery per webhook)
  --workers N              SWITCHYARD_WORKERS (default 1, as the bench's probe)
  --native 1|0             native or native-free service (default 1)
  --env K=V                further SWITCHYARD_* settings (repeatable)
  --out FILE               also write every figure as JSON
  --help                   this text
`;

const SHARES: Record<StreamKind, number> = { evaluation: 0.8, event: 0.1, bulk: 0.1 };
const KINDS: StreamKind[] = ["evaluation", "event", "bulk"];
/** Every phase sends users and bodies no earlier phase sent. */
const SEQUENCES_PER_PHASE = 10_000_000;
/** Between two samples of the delivery backlog during a phase. */
const BACKLOG_SAMPLE_MS = 250;
/** How long a phase's backlog may take to drain before the next phase starts anyway (reported). */
const DRAIN_LIMIT_MS = 120_000;

const { values } = parseArgs({
  options: {
    help: { type: "boolean", short: "h" },
    seconds: { type: "string", default: "10" },
    repeats: { type: "string", default: "3" },
    "max-seconds": { type: "string", default: "3" },
    rates: { type: "string" },
    load: { type: "string", default: "0.7" },
    "change-rate": { type: "string", default: "50" },
    "alone-change-rate": { type: "string" },
    "in-flight": { type: "string", default: "1" },
    webhooks: { type: "string", default: "1" },
    workers: { type: "string", default: "1" },
    native: { type: "string", default: "1" },
    env: { type: "string", multiple: true, default: [] },
    out: { type: "string" },
  },
});

function paceOf(option: string): ChangePace {
  if (option === "max") return { inFlight: Math.max(1, Number(values["in-flight"])) };
  const rate = Number(option);
  if (!(rate > 0)) throw new Error(`a change rate is a number above 0 or max, not ${option}`);
  return { rate };
}

const paceText = (pace: ChangePace) => ("rate" in pace ? `${pace.rate}/s` : `as fast as they commit, ${pace.inFlight} in flight`);

interface Service {
  url: string;
  pid: number;
  environmentId: string;
  specs: (sequenceStart: number) => Record<StreamKind, StreamSpec>;
}

async function seed(url: string, pid: number, receiver: CountingReceiver, webhooks: number): Promise<Service> {
  const app = await seedApp(url, "webhooks-under-load", featureDefinitions(50));
  for (const body of trafficEntitiesBodies()) await postBulk(url, app.publishableKey, body);
  const environmentId = encodeURIComponent(app.environmentId);
  await call(url, "PUT", `/admin/apps/${encodeURIComponent(app.appId)}/features/${CHURN_FEATURE}`, BENCH_ADMIN_TOKEN, { description: "rewritten by the bench's change stream" });
  await call(url, "PUT", `/admin/environments/${environmentId}/features/${CHURN_FEATURE}/targeting`, BENCH_ADMIN_TOKEN, { rules: [] });
  // Subscribed after seeding, so the seeding's changes queue nothing.
  for (let index = 0; index < webhooks; index++) receiver.setSecret(index, (await createWebhook(url, app.appId, receiver.urlOf(index))).secret);
  await waitCaughtUp(url);
  const specs = (sequenceStart: number) =>
    Object.fromEntries(KINDS.map((kind) => [kind, { kind, publishableKey: app.publishableKey, secretKey: app.secretKey, sequenceStart }])) as Record<StreamKind, StreamSpec>;
  return { url, pid, environmentId: app.environmentId, specs };
}

/** Waits until every committed change's deliveries arrived; answers how long that took (ms), or NaN past the limit. */
async function drain(receiver: CountingReceiver, expected: number): Promise<number> {
  const started = performance.now();
  while (receiver.delivered() < expected) {
    if (performance.now() - started > DRAIN_LIMIT_MS) return Number.NaN;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now() - started;
}

interface Ledger {
  /** Deliveries the committed changes queued so far (changes × webhooks, plus nothing else: no other writes run). */
  expected: number;
}

async function runPhase(
  phase: "A" | "B" | "C",
  round: number,
  service: Service,
  receiver: CountingReceiver,
  ledger: Ledger,
  offered: { kind: StreamKind; rate: number }[],
  pace: ChangePace | undefined,
  seconds: number,
  webhooks: number,
): Promise<PhaseRun> {
  const phaseIndex = round * 3 + ["A", "B", "C"].indexOf(phase);
  const specs = service.specs((phaseIndex + 1) * SEQUENCES_PER_PHASE);
  const backlogAtStart = ledger.expected - receiver.delivered();
  const deliveredBefore = receiver.delivered();
  const ticksBefore = threadTicks(service.pid);
  const started = performance.now();
  const changes = pace === undefined ? undefined : startChangeStream(service.url, service.environmentId, pace, phaseIndex * SEQUENCES_PER_PHASE);
  // The backlog over the phase: queued (committed changes × webhooks, changes in flight not counted) minus received.
  const backlogSamples: number[] = [];
  const sampler = setInterval(() => backlogSamples.push(ledger.expected + (changes?.committed() ?? 0) * webhooks - receiver.delivered()), BACKLOG_SAMPLE_MS);
  const streams: Record<string, StreamFigures> =
    offered.length > 0
      ? await runStreams(service.url, offered.map(({ kind, rate }) => ({ spec: specs[kind], rate })), seconds)
      : await new Promise((resolve) => setTimeout(() => resolve({}), seconds * 1000));
  const counts = await changes?.stop();
  clearInterval(sampler);
  const elapsedSeconds = (performance.now() - started) / 1000;
  const cpuMs = cpuBetween(ticksBefore, threadTicks(service.pid)).reduce((sum, row) => sum + row.ms, 0);
  ledger.expected += (counts?.committed ?? 0) * webhooks;
  const delivered = receiver.delivered() - deliveredBefore;
  const backlogAtEnd = ledger.expected - receiver.delivered();
  const loadRequests = Object.values(streams).reduce((sum, figures) => sum + figures.rps * seconds, 0);
  const drainMs = pace === undefined ? 0 : await drain(receiver, ledger.expected);
  await waitCaughtUp(service.url);
  return {
    phase,
    round,
    elapsedSeconds,
    streams,
    changesCommitted: counts?.committed ?? 0,
    changesFailed: counts?.failed ?? 0,
    ...(counts?.firstFailure !== undefined ? { firstChangeFailure: counts.firstFailure } : {}),
    delivered,
    deliveriesPerSecond: delivered / elapsedSeconds,
    backlogAtStart,
    backlogAtEnd,
    backlogSamples,
    drainSeconds: drainMs / 1000,
    cpuMs,
    loadRequests,
    cpuUsPerLoadRequest: loadRequests > 0 ? (cpuMs * 1000) / loadRequests : Number.NaN,
    cpuUsPerChange: counts !== undefined && counts.committed > 0 ? (cpuMs * 1000) / counts.committed : Number.NaN,
  };
}

async function main(): Promise<void> {
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const seconds = Number(values.seconds);
  const repeats = Number(values.repeats);
  const webhooks = Number(values.webhooks);
  const load = Number(values.load);
  if (!(seconds > 0) || !(repeats >= 1) || !(webhooks >= 1) || !(load > 0)) throw new Error("--seconds, --repeats, --webhooks and --load must be above 0");
  const busyPace = paceOf(values["change-rate"]);
  const alonePace = paceOf(values["alone-change-rate"] ?? values["change-rate"]);
  const fixedRates = values.rates?.split(",").map(Number);
  if (fixedRates !== undefined && (fixedRates.length !== 3 || !fixedRates.every((rate) => rate > 0))) throw new Error("--rates takes three rates above 0: evaluation,event,bulk");
  const env = Object.fromEntries(values.env.map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));
  const data = tempDir("switchyard-webhooks-bench-");
  const receiver = await startCountingReceiver();
  const server = await startService({
    dataDir: data.path,
    workers: Number(values.workers),
    native: values.native !== "0",
    env: { SWITCHYARD_WEBHOOK_ALLOW: "127.0.0.1/32", ...env },
  });
  let failed = false;
  try {
    const service = await seed(server.url, server.pid, receiver, webhooks);
    const maxima: Partial<Record<StreamKind, number>> = {};
    if (fixedRates === undefined) {
      for (const kind of KINDS) {
        const figures = await runStreamProcess(server.url, service.specs(0)[kind], Number(values["max-seconds"]));
        // Tracking streams count what was acknowledged: refusals while the projection is behind come back fast.
        maxima[kind] = kind === "evaluation" ? figures.rps : (figures.acknowledgedRps ?? figures.rps);
        await waitCaughtUp(server.url);
      }
    }
    const offered = KINDS.map((kind, index) => ({ kind, rate: fixedRates !== undefined ? fixedRates[index]! : Math.max(1, Math.round(load * SHARES[kind] * maxima[kind]!)) }));
    process.stderr.write(`offering ${offered.map(({ kind, rate }) => `${kind} ${rate}/s`).join(", ")}; changes in B ${paceText(busyPace)}, in C ${paceText(alonePace)}; ${webhooks} webhook(s)\n`);
    const ledger: Ledger = { expected: 0 };
    const runs: PhaseRun[] = [];
    for (let round = 0; round < repeats; round++) {
      for (const phase of ["A", "B", "C"] as const) {
        const run = await runPhase(phase, round, service, receiver, ledger, phase === "C" ? [] : offered, phase === "A" ? undefined : phase === "B" ? busyPace : alonePace, seconds, webhooks);
        process.stderr.write(`round ${round + 1} ${phase}: ${run.delivered} delivered, backlog ${run.backlogAtStart} -> ${run.backlogAtEnd}\n`);
        runs.push(run);
      }
    }
    const report = summarize(runs, {
      offered: Object.fromEntries(offered.map(({ kind, rate }) => [kind, rate])),
      maxima,
      busyChanges: paceText(busyPace),
      aloneChanges: paceText(alonePace),
      webhooks,
      seconds,
      signatures: { verified: receiver.verified(), bad: receiver.badSignatures(), duplicates: receiver.duplicates() },
    });
    failed = report.failures.length > 0;
    if (values.out !== undefined) writeFileSync(values.out, `${JSON.stringify(report.json, null, 2)}\n`);
    process.stdout.on("error", () => {});
    process.stdout.write(`${report.text}\n`);
  } finally {
    await server.stop();
    await receiver.close();
    data.remove();
  }
  if (failed) process.exitCode = 1;
}

await main();
