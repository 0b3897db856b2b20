/**
 * For each target a run misses, what bounds it, in figures measured in the same run: the service with (almost) no
 * evaluation to do, the transport of an answer of the same size, evaluation alone in one thread, the records the
 * projection of tracking stores against the one its ceiling stores, how far the projection fell behind, the stages of
 * the CPU per request, and how much of the machine sat idle meanwhile.
 */
import { answerTransportId, BULK_CEILING_ID, EVENT_RECORDS_ID, GROUP_COMMIT_ID } from "../baselines/transport.js";
import { ENABLED_ID, evaluateId, repeatedEvaluateId } from "../serving/evaluation-routes.js";
import { MIXED_MAX_ID, MIXED_PACED_ID, MIXED_SHARE_IDS } from "../serving/mixed.js";
import { BULK_ID, BULK_MIXED_ID, EVENT_ID } from "../serving/tracking-routes.js";
import type { LoadFigure } from "../support/lab.js";
import { loadTargetRatio, P99_TARGET_MS, STAGE_TARGET_ID, type BenchReport, type Comparison } from "./model.js";
import { SAME_BYTES_TARGETS, UNPROFILED_CPU_ID } from "./physical-limit.js";

/** Above this idle share, a capped rate is waiting (threads on one another, or commits), not short of CPU. */
const IDLE_WORTH_NAMING = 0.1;

const percent = (share: number): string => `${(share * 100).toFixed(1)} %`;
const finite = (value: number | undefined): value is number => value !== undefined && Number.isFinite(value);

/** One Markdown bullet per missed target; an empty list when nothing was missed. */
export function boundsOfMissedTargets(report: BenchReport): string[] {
  const comparison = (id: string) => report.comparisons.find((entry) => entry.id === id);
  const figure = (id: string) => report.load.find((entry) => entry.id === id);
  const lines: string[] = [];
  for (const target of report.targets) {
    if (target.verdict !== "MISS") continue;
    const head = `**${target.id}** (${target.target ?? "target"}; measured ${measured(target)}):`;
    lines.push(`- ${head} ${boundOf(target, report, comparison, figure)}`);
  }
  return lines;
}

function measured(target: Comparison): string {
  if (!finite(target.value)) return "not measured";
  if (target.unit === "µs") return `${target.value.toFixed(1)} µs`;
  if (target.unit === "ms p99") return `p99 ${target.value.toFixed(2)} ms`;
  return finite(target.ratio) ? percent(target.ratio) : `${Math.round(target.value)} ${target.unit}`;
}

function boundOf(
  target: Comparison,
  report: BenchReport,
  comparison: (id: string) => Comparison | undefined,
  figure: (id: string) => LoadFigure | undefined,
): string {
  const evaluated = /^evaluate-(\d+)$/.exec(target.id);
  if (evaluated) return evaluationBound(Number(evaluated[1]), report, comparison, figure);
  const physical = /^evaluate-(\d+)-(same-bytes|idle)$/.exec(target.id);
  if (physical) return physicalLimitBound(Number(physical[1]), physical[2] as "same-bytes" | "idle", report, figure);
  switch (target.id) {
    case EVENT_ID:
      return eventBound(report, figure, comparison(EVENT_ID));
    case BULK_ID:
    case BULK_MIXED_ID:
      return trackingBound(target.id, report, figure, comparison(target.id));
    case STAGE_TARGET_ID:
      return stageBound(report);
    // Issue 33's unprofiled CPU target: bounded by the same stages as the profiled one, in their unprofiled shares.
    case UNPROFILED_CPU_ID:
      return stageBound(report, figure(evaluateId(50))?.serverCpuUsPerItem);
    case MIXED_PACED_ID:
      return mixedBound(figure);
    case ENABLED_ID:
      return enabledBound(report, figure, comparison(ENABLED_ID));
    default:
      return "this run measures no bound for it.";
  }
}

/**
 * Issue 33's targets against the bare server sending the same answer bytes, in the same run: what the service spends
 * per request beyond sending the bytes, and what the machine leaves idle under each (the load generator, `wrk -t1`, is
 * one thread: how much it alone leaves idle shows in the bare server's row).
 */
function physicalLimitBound(features: number, kind: "same-bytes" | "idle", report: BenchReport, figure: (id: string) => LoadFigure | undefined): string {
  const own = figure(evaluateId(features));
  const bare = figure(answerTransportId(features));
  const target = SAME_BYTES_TARGETS.find((entry) => entry.features === features);
  const ownCpu = own?.serverCpuUsPerItem;
  const bareCpu = bare?.serverCpuUsPerItem;
  const parts: string[] = [];
  if (finite(ownCpu) && finite(bareCpu)) {
    parts.push(
      `the service spent ${ownCpu.toFixed(1)} µs of CPU per request over all its threads, the bare server sending the same bytes ${bareCpu.toFixed(1)} µs ` +
        `(${answerTransportId(features)}): ${(ownCpu - bareCpu).toFixed(1)} µs a request are the service's own work (routing, keys, context, the hop, evaluation)`,
    );
  }
  const ownIdle = own?.machineIdleShare;
  const bareIdle = bare?.machineIdleShare;
  if (finite(ownIdle) && finite(bareIdle)) {
    parts.push(`the machine sat ${percent(ownIdle)} idle under ${evaluateId(features)} and ${percent(bareIdle)} under the bare server, whose one thread never waits for another`);
  }
  if (kind === "same-bytes" && bare !== undefined && finite(bare.value)) {
    const alone = evaluationAloneClause(features, report, own, { value: bare.value, name: "the same-bytes limit" }, target?.minRatio);
    if (alone !== undefined) parts.push(alone);
  }
  if (kind === "same-bytes" && target?.maxP99Ms !== undefined && own !== undefined && finite(own.rps) && own.rps > 0 && own.offeredRate === undefined) {
    // Little's law for a closed loop: every connection always has one request out, so the mean latency is
    // connections ÷ rate, and a p99 under the bound needs a mean under it first.
    const meanMs = (1000 * own.connections) / own.rps;
    const needed = (1000 * own.connections) / target.maxP99Ms;
    parts.push(
      `with ${own.connections} connections in a closed loop the mean latency is connections ÷ rate = ${meanMs.toFixed(1)} ms, so a p99 under ${target.maxP99Ms} ms ` +
        `needs at least ${Math.round(needed).toLocaleString("en")} req/s before any spread`,
    );
  }
  if (parts.length === 0) return `this run measured no CPU or idle share for ${evaluateId(features)} and the bare server beside it.`;
  const tail = kind === "idle" ? " The rest of the idle share is the service's threads taking turns (the evaluate bullets above)." : "";
  return `${capitalise(parts.join("; "))}.${tail}`;
}

/**
 * The paced mix against its parts alone, each paced at its share of the mix's rate in the same run: evaluations on
 * the service, `/event` on the service, and the bare group-commit server at the events' rate (a write answered after
 * its commit, with nothing else to do). A part whose p99 alone already passes the target bounds the mix's. A paced run
 * leaves cores idle by design, so idle shares say nothing here.
 */
function mixedBound(figure: (id: string) => LoadFigure | undefined): string {
  const p99 = (id: string) => figure(id)?.latencyMs.p99;
  const shown = (id: string) => (finite(p99(id)) ? `p99 ${p99(id)!.toFixed(2)} ms` : "not measured");
  const parts: [string, string][] = [
    [MIXED_SHARE_IDS.evaluation, "its evaluations alone"],
    [MIXED_SHARE_IDS.event, "its POST /event alone"],
    [MIXED_SHARE_IDS.groupCommit, "the bare group-commit server at the events' rate"],
  ];
  const measuredParts = parts.filter(([id]) => figure(id) !== undefined);
  const unpaced = `the unpaced mix had ${shown(MIXED_MAX_ID)} at its maximum rate`;
  if (measuredParts.length === 0) return `${unpaced}; this run did not measure the mix's parts alone at their shares of its rate.`;
  const listed = measuredParts.map(([id, name]) => `${name} ${shown(id)} (${id})`).join(", ");
  const past = measuredParts.filter(([id]) => finite(p99(id)) && p99(id)! >= P99_TARGET_MS).map(([, name]) => name);
  const named = past.length > 1 ? `${past.slice(0, -1).join(", ")} and ${past[past.length - 1]}` : past.join("");
  const verdict =
    past.length > 0
      ? `already past the ${P99_TARGET_MS} ms target alone: ${named}, so the target is out of reach of the mix on this machine before the parts share it`
      : `each part alone is within the ${P99_TARGET_MS} ms target: the parts' sharing of the machine is what the mix adds`;
  return `${unpaced}; at their shares of the paced rate, ${listed} — ${verdict}.`;
}

/**
 * `/features/enabled` against `/features/evaluated`: the same evaluation, plus its check events appended to the log
 * (not awaited) and projected beside the load; the difference in server CPU per call is what those events cost.
 */
function enabledBound(report: BenchReport, figure: (id: string) => LoadFigure | undefined, comparison: Comparison | undefined): string {
  const own = figure(ENABLED_ID);
  const evaluated = figure(evaluateId(50))?.serverCpuUsPerItem;
  const cpuUs = own?.serverCpuUsPerItem;
  const head = `each call evaluates as /features/evaluated does and also appends its check events (one grouped log record) without waiting for their commit, which the projection then stores`;
  const costs =
    finite(cpuUs) && finite(evaluated) && evaluated > 0
      ? `; the service spent ${cpuUs.toFixed(1)} µs of CPU per call over all its threads (the append and its projection included), /features/evaluated at 50 features ${evaluated.toFixed(1)} µs: the check events cost ${(cpuUs - evaluated).toFixed(1)} µs a call, ${(cpuUs / evaluated).toFixed(1)}× the evaluation's whole request.`
      : `; this run measured no CPU per call for it.`;
  return `${head}${costs}${cpuClause(report, own, comparison)}${idleClause(own)}`;
}

function evaluationBound(features: number, report: BenchReport, comparison: (id: string) => Comparison | undefined, figure: (id: string) => LoadFigure | undefined): string {
  const parts: string[] = [];
  const goal = loadTargetRatio(evaluateId(features));
  const cached = comparison(repeatedEvaluateId(features));
  if (cached !== undefined && finite(cached.ratio)) {
    parts.push(
      `the service answering mostly from its answer cache (repeated contexts: little evaluation, no hop to the worker; ${cached.id}) reached ${percent(cached.ratio)} of the hello-world` +
        (finite(goal) && cached.ratio < goal ? `, below the target before evaluation costs anything` : ""),
    );
  }
  const transport = comparison(answerTransportId(features));
  if (transport !== undefined && finite(transport.ratio)) {
    parts.push(`a bare uWebSockets.js GET sending an answer of this size reached ${percent(transport.ratio)} (${transport.id})`);
  }
  const own = figure(evaluateId(features));
  const helloWorld = comparison(evaluateId(features))?.baselineValue;
  const alone = finite(helloWorld) ? evaluationAloneClause(features, report, own, { value: helloWorld, name: "the hello-world" }, goal) : undefined;
  if (alone !== undefined) parts.push(alone);
  const workers = report.scaling.workers;
  const one = workers.find((point) => point.x === 1);
  const two = workers.find((point) => point.x === 2);
  if (features > 50 && one !== undefined && two !== undefined && finite(one.value) && finite(two.value)) {
    const change = two.value / one.value - 1;
    parts.push(`evaluation runs on one worker thread by default (cores − 1); at 50 features a second worker served ${percent(Math.abs(change))} ${change >= 0 ? "more" : "less"} in this run`);
  }
  const text = parts.length > 0 ? `${capitalise(parts.join("; "))}.` : "This run measured no bound for it.";
  return `${text}${cpuClause(report, own, comparison(evaluateId(features)))}${idleClause(own)}`;
}

/**
 * What the worker threads could answer were evaluation their only cost: one thread's evaluation alone, in-process
 * (bench/evaluation/write-answer.ts), over the worker threads the service ran with.
 */
function evaluationAloneClause(
  features: number,
  report: BenchReport,
  own: LoadFigure | undefined,
  baseline: { value: number; name: string },
  goal: number | undefined,
): string | undefined {
  const measuredAlone = report.baselines.evaluationAlone;
  const alone = Array.isArray(measuredAlone) ? measuredAlone.find((entry) => entry.features === features) : undefined;
  const workers = own?.server.kind === "service" ? own.server.workers : undefined;
  if (alone === undefined || !(alone.microsecondsPerAnswer > 0) || workers === undefined || workers < 1 || !finite(baseline.value)) return undefined;
  const most = (workers * 1e6) / alone.microsecondsPerAnswer;
  const share = most / baseline.value;
  const threads = workers === 1 ? "the one worker thread" : `its ${workers} worker threads`;
  return (
    `evaluation alone (writeAnswer in one thread over the run's distinct contexts, in-process: no HTTP, hop, remote-context read or store) took ` +
    `${alone.microsecondsPerAnswer.toFixed(1)} µs an answer, so ${threads} could answer at most ${Math.round(most).toLocaleString("en")}/s, ` +
    `${percent(share)} of ${baseline.name}, were every other cost nothing` +
    (finite(goal) && share < goal ? ", below the target before any transport, hop or remote context" : "")
  );
}

/**
 * Bulk items are counted once projected: the answer waits for one log append, the projection then stores each event
 * with its user, company and analytics cells. What was acknowledged against what was projected says which bounds it.
 */
function trackingBound(id: string, report: BenchReport, figure: (id: string) => LoadFigure | undefined, own: Comparison | undefined): string {
  const bulk = figure(id);
  const projection = bulk?.projection;
  const parts: string[] = [];
  if (projection !== undefined && finite(projection.acknowledgedPerSecond) && finite(projection.itemsPerSecond)) {
    parts.push(
      `each body is answered once appended to the tracking log; during the load the service acknowledged ${Math.round(projection.acknowledgedPerSecond).toLocaleString("en")} items/s, ` +
        `the projection caught up ${projection.catchUpSeconds.toFixed(2)} s after it (lag p99 ${Math.round(projection.lagP99Ms)} ms during it)` +
        (projection.refused > 0 ? ` and ${projection.refused.toLocaleString("en")} bodies were refused (503 PROJECTION_BEHIND)` : "") +
        `, so ${Math.round(projection.itemsPerSecond).toLocaleString("en")} items/s projected: ` +
        // Catch-up beyond a tenth of the load, or refusals, mean answers outran the projection.
        (projection.catchUpSeconds > 0.1 * projection.loadSeconds || projection.refused > 0
          ? "the projection, not the answer, bounds the rate"
          : "the projection kept up, so the answers' own rate (HTTP, validation, the log append) bounds it")
    );
  }
  const records = report.baselines.bulkRecords;
  const puts = report.baselines.lmdbPuts;
  if ("value" in records && "value" in puts) {
    parts.push(
      `the projection stores each event with its user, company and analytics cells, ${records.recordsPerEvent.toFixed(2)} records per event, where the bulk ceiling (${BULK_CEILING_ID}) stores each item once; ` +
        `raw lmdb-js puts of exactly those records, with no parsing, validation or HTTP, reached ${percent(records.value / puts.value)} of raw puts of the event records alone ` +
        `(${Math.round(records.value).toLocaleString("en")} against ${Math.round(puts.value).toLocaleString("en")} events/s)`
    );
  }
  const text = parts.length > 0 ? `${parts.map(capitalise).join(". ")}.` : "This run measured neither the projection nor the raw-puts baselines.";
  return text + cpuClause(report, bulk, own) + idleClause(bulk);
}

/** A single event: the CPU the service spends on it against the bare group-commit server's, both on one main thread. */
function eventBound(report: BenchReport, figure: (id: string) => LoadFigure | undefined, comparison: Comparison | undefined): string {
  const event = figure(EVENT_ID);
  const ceiling = figure(GROUP_COMMIT_ID);
  const serviceCpu = event?.serverCpuUsPerItem;
  const ceilingCpu = ceiling?.serverCpuUsPerItem;
  if (!finite(serviceCpu) || !finite(ceilingCpu)) return `this run measured no CPU per request to compare.${idleClause(event)}`;
  return (
    `the service spent ${serviceCpu.toFixed(1)} µs of CPU per call over all its threads (routing, validation, key resolution, the log append the answer waits for, ` +
    `and the projection of the event with its user, company and analytics cells running beside the load), the bare group-commit server ${ceilingCpu.toFixed(1)} µs (parsing and storing one record); ` +
    `at the ceiling's rate the service's work would need ${(serviceCpu / ceilingCpu).toFixed(1)}× the CPU the ceiling uses.` +
    storageClause(figure(EVENT_RECORDS_ID), ceiling) +
    `${cpuClause(report, event, comparison)}${idleClause(event)}`
  );
}

/**
 * What storing an event's projection in the answer's commit would leave of the target: the group-commit server
 * storing each body with its user, company and analytics cells (the service's own tracking writer), against the
 * ceiling's single record. The service now answers after the log append alone, so this is context, not its bound.
 */
function storageClause(records: LoadFigure | undefined, ceiling: LoadFigure | undefined): string {
  if (records === undefined || ceiling === undefined || !(ceiling.value > 0)) return "";
  const share = records.value / ceiling.value;
  const target = loadTargetRatio(EVENT_ID);
  const verdict =
    target === undefined ? "" : share < target ? ": had the answer waited for all of it (as before tracking was logged first), the target was out of reach before any routing, key or validation" : "";
  return (
    ` A bare server storing each body with everything it projects to (event, user, company and analytics cells, by the service's own writer, ` +
    `one commit per turn, answered after it; ${EVENT_RECORDS_ID}) reached ${percent(share)} of the ceiling${verdict}.`
  );
}

function stageBound(report: BenchReport, unprofiledUs?: number): string {
  const stage = report.stages.find((entry) => entry.features === 50);
  if (stage === undefined) return "the stages were not measured in this run.";
  const transport = stage.stages["HTTP transport and response write"];
  const hop = stage.stages["thread hop"];
  const hashing = stage.stages["rollout hashing"];
  // The profiler slows every stage alike, roughly: their shares carry over to the unprofiled total.
  const scaled = finite(unprofiledUs) && stage.totalUs > 0 ? ((transport + hop + hashing) / stage.totalUs) * unprofiledUs : undefined;
  const unprofiled =
    scaled === undefined
      ? ""
      : ` In their shares of the unprofiled ${unprofiledUs!.toFixed(1)} µs, those three stages come to ${scaled.toFixed(1)} µs a request.`;
  return (
    `of ${stage.totalUs.toFixed(1)} µs, the HTTP transport and response write took ${transport.toFixed(1)} µs and the hop to the worker and back ` +
    `${hop.toFixed(1)} µs: ${(transport + hop).toFixed(1)} µs before any evaluation; the SHA-256 rollout hashes that bit-exact parity with ` +
    `the reference requires (one per rollout the context reaches) took ${hashing.toFixed(1)} µs more, ${(transport + hop + hashing).toFixed(1)} µs ` +
    `before the rules themselves (stages of this run, "Where the CPU goes"; profiled, so each a little above its share of the unprofiled total).` +
    unprofiled
  );
}

/**
 * The rate the machine's cores could serve at the CPU the service spent per request, were they all the service's
 * (the load generator costing nothing), set against the rate the target asks for.
 */
function cpuClause(report: BenchReport, own: LoadFigure | undefined, comparison: Comparison | undefined): string {
  const cpuUs = own?.serverCpuUsPerItem;
  const cores = report.meta.cpus?.count;
  const goal = comparison === undefined ? undefined : loadTargetRatio(comparison.id);
  if (!finite(cpuUs) || cpuUs <= 0 || !finite(cores) || comparison === undefined || !finite(comparison.baselineValue) || !finite(goal)) return "";
  const unit = own!.itemsPerRequest > 1 ? "event" : "request";
  const most = (cores * 1e6) / cpuUs;
  const needed = goal * comparison.baselineValue;
  const share = most / comparison.baselineValue;
  return (
    ` At ${cpuUs.toFixed(1)} µs of server CPU per ${unit}, all ${cores} cores could serve at most ${Math.round(most).toLocaleString("en")}/s, ` +
    `${percent(share)} of the baseline, with nothing left for the load generator` +
    (most < needed ? `; the target needs ${Math.round(needed).toLocaleString("en")}/s, so at most ${((cores * 1e6) / needed).toFixed(1)} µs per ${unit}.` : ".")
  );
}

function idleClause(figure: LoadFigure | undefined): string {
  const idle = figure?.machineIdleShare;
  if (!finite(idle)) return "";
  return idle >= IDLE_WORTH_NAMING
    ? ` ${percent(idle)} of the machine's CPU (load generator included) sat idle while it ran: the rate is capped by waiting (threads on one another, or commits), not by CPU alone.`
    : ` The machine's CPU was ${percent(1 - idle)} busy while it ran.`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
