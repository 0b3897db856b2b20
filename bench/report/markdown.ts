/** The Markdown side of the report: every figure with its baseline, ratio, target and verdict, then the details. */
import type { LoadFigure, Section } from "../support/lab.js";
import { GROUP_COMMIT_ID } from "../baselines/transport.js";
import { BULK_ID, EVENT_ID } from "../serving/tracking-routes.js";
import { PEERS_HEADING, peersBlocks } from "../peers/markdown.js";
import { boundsOfMissedTargets } from "./bounds.js";
import { clusterBlocks } from "../cluster/markdown.js";
import { curveTable, loadTable } from "./load-table.js";
import { LEDGER_HEADING, ledgerBlocks } from "./ledger-markdown.js";
import { count, isNumber, mib, ms, nanoseconds, shorten, table, withUnit } from "./format.js";
import type { BenchReport, Comparison } from "./model.js";

/** Section headings, in order; the smoke test looks for each of them. */
export const MARKDOWN_SECTIONS = [
  "## Targets",
  "## What bounds the targets missed",
  "## Every figure against its baseline",
  "## Micro-benchmarks",
  "## Baselines",
  "## Load: evaluation",
  LEDGER_HEADING,
  "## Where the CPU goes",
  "## Load: rules",
  "## Load: tracking",
  "## Mixed load",
  "## Executor arrangements",
  "## Native vs native-free",
  "## Scaling curves",
  "## Cluster",
  PEERS_HEADING,
  "## Notes",
] as const;

function ratio(comparison: Pick<Comparison, "ratio" | "ratioStyle">): string {
  if (!isNumber(comparison.ratio)) return "—";
  return comparison.ratioStyle === "percent" ? `${(comparison.ratio * 100).toFixed(1)} %` : `${comparison.ratio.toFixed(2)}×`;
}

function valueWithUnit(comparison: Comparison): string {
  if (!isNumber(comparison.value)) return "not measured";
  return comparison.unit === "ms p99" ? ms(comparison.value) + " p99" : `${count(comparison.value)} ${comparison.unit}`;
}

function baselineValue(comparison: Comparison): string {
  if (comparison.baselineLabel === "—") return "—";
  return comparison.unit === "ms p99" ? ms(comparison.baselineValue) : count(comparison.baselineValue);
}

function comparisonRows(comparisons: readonly Comparison[]): string[][] {
  return comparisons.map((comparison) => [
    comparison.label,
    valueWithUnit(comparison),
    comparison.baselineLabel,
    baselineValue(comparison),
    ratio(comparison),
    comparison.target ?? "—",
    comparison.verdict,
  ]);
}

export function renderMarkdown(report: BenchReport): string {
  const { meta } = report;
  const bySection = (section: Section) => report.load.filter((figure) => figure.section === section);
  const lines: string[] = [];
  // Blank lines around every block: a table straight after a paragraph line is not a table in CommonMark.
  const push = (...parts: string[]) => lines.push(...parts.flatMap((part) => [part, ""]));

  push(`# Switchyard benchmarks — ${meta.date} on ${meta.host} (${meta.mode})`);
  push(
    table(
      ["", ""],
      [
        ["command", `\`${meta.command}\``],
        ["machine", `${meta.cpus.count} × ${meta.cpus.model}, ${mib(meta.memoryBytes)} RAM, ${meta.platform}`],
        ["node", meta.node],
        ["load average (1/5/15 min)", `at start ${meta.loadAverage.atStart.map((value) => value.toFixed(2)).join(" / ")}, at end ${meta.loadAverage.atEnd.map((value) => value.toFixed(2)).join(" / ")}`],
        [
          "load generator",
          `${meta.driver} ${meta.driver === "wrk" ? `-t${meta.load.threads} -c${meta.load.connections} -d${Math.max(1, Math.round(meta.load.durationSeconds))}s --latency` : `${meta.load.connections} connections, ${meta.load.amount !== undefined ? `${meta.load.amount} requests` : `${meta.load.durationSeconds} s`} per run`}`,
        ],
        [
          "runs",
          `${meta.load.repeats} measured run(s) per scenario after ${meta.load.warmupSeconds} s of warm-up (excluded); figures are medians. ` +
            "Runs last longer where requests are slow (at least ten warm-up median latencies, within the mode's limit); bulk bodies use 8 connections " +
            "and count items once projected (the clock stops when GET /health shows the projection caught up).",
        ],
        ["took", `${meta.elapsedSeconds.toFixed(0)} s (${meta.startedAt} → ${meta.finishedAt})`],
      ],
    ),
  );
  if (meta.notes.length > 0) push(meta.notes.map((note) => `> ${note}`).join("\n>\n"));

  push("## Targets", table(["figure", "value", "baseline", "baseline value", "ratio", "target", "result"], comparisonRows(report.targets)));
  const bounds = boundsOfMissedTargets(report);
  push("## What bounds the targets missed", bounds.length > 0 ? bounds.join("\n") : "_Every target was met._");

  push(
    "## Every figure against its baseline",
    "HTTP figures are compared with a bare hello-world server on the same transport and method (uWebSockets.js for the " +
      "native service, node:http for the native-free twin); single tracking calls with the group-commit server; bulk ingestion, in items projected " +
      "per second, with the bulk ceiling (the group-commit server putting each item on its own); native-free bulk with native bulk.",
    table(["figure", "value", "baseline", "baseline value", "ratio", "target", "result"], comparisonRows(report.comparisons)),
  );

  push(
    "## Micro-benchmarks",
    "tinybench, in the benchmark process; throughput is the mean over samples, ±rme the relative margin of error.",
    table(
      ["group", "task", "ops/s", "items/s", "mean", "p99", "±rme", "samples"],
      report.micro.map((figure) => [
        figure.group,
        figure.name,
        count(figure.opsPerSecond),
        figure.itemsPerCall > 1 ? count(figure.itemsPerSecond) : "",
        nanoseconds(figure.meanNs),
        nanoseconds(figure.p99Ns),
        `${figure.rmePercent.toFixed(1)} %`,
        String(figure.samples),
      ]),
    ),
    "### Micro comparisons",
    table(["figure", "value", "baseline", "baseline value", "ratio", "target", "result"], comparisonRows(report.microComparisons)),
  );

  const lmdb = report.baselines.lmdbPuts;
  push(
    "## Baselines",
    loadTable(bySection("baseline")),
    "value" in lmdb
      ? table(
          ["baseline", "value", "per event", "spread", "runs"],
          [[lmdb.title, `${count(lmdb.value)} events/s`, `${lmdb.microsecondsPerEvent.toFixed(2)} µs`, lmdb.runs.length > 1 ? `±${(lmdb.spread.percent / 2).toFixed(1)} %` : "n=1", lmdb.runs.map((run) => count(run)).join(", ")]],
        )
      : `Raw LMDB puts failed: ${lmdb.failure}`,
    bulkRecordsLine(report),
    evaluationAloneLine(report),
    groupCommitLine(report),
    `One stored event record is ${report.baselines.eventRecordBytes.msgpackBytes} B as msgpack and ${report.baselines.eventRecordBytes.jsonBytes} B as JSON.`,
  );

  push(
    "## Load: evaluation",
    "Headline rows use distinct contexts (random pairs of 10,000 users × 200 companies, whose stored attributes fill the " +
      "context): what a product's real traffic costs. The `-repeated` rows cycle 1,000 users and are mostly answered from " +
      "the answer cache; the `-br` rows ask for brotli.",
    loadTable(bySection("evaluation")),
  );
  push(...ledgerBlocks(report.ledger));
  push(
    "## Where the CPU goes",
    "Server CPU per request over every thread of the service, stage by stage, from its CPU profiles during one run " +
      "(bench/support/cpu-stages.ts says how samples are assigned). The profiler itself costs a few per cent.",
    stageTable(report),
  );
  push("## Load: rules", loadTable(bySection("rules")));
  push("## Load: tracking", loadTable(bySection("tracking")), ...projectionBlocks(report.load));
  push(
    "## Mixed load",
    "80 % GET /features/evaluated (50 features) and 20 % POST /event; first unpaced, then paced at 70 % of the unpaced rate. " +
      "Latency is measured from when each request is sent (no coordinated-omission correction).",
    loadTable(bySection("mixed")),
  );

  push(
    "## Executor arrangements",
    "SWITCHYARD_WORKERS=0 runs jobs inline on the main thread; 1 and 2 run them in a Piscina pool fed in batches. " +
      "Pool 1 is the default on this machine (cores − 1) and its figures are the main scenarios'.",
    table(
      ["workload", ...report.executors[0]!.rows.map((row) => `${row.arrangement} (workers=${row.workers})`), "fastest"],
      report.executors.map((verdict) => [
        `${verdict.workload} (${verdict.rows[0]!.unit})`,
        ...verdict.rows.map((row) => `${count(row.value)} (p99 ${ms(row.p99Ms)})`),
        verdict.fastest ?? "—",
      ]),
    ),
    loadTable(bySection("executors")),
  );

  push(
    "## Native vs native-free",
    report.nativeFree.available ? "The native-free twin: node:http front end, pure-JS log store, jobs inline." : `Native-free figures missing: ${shorten(report.nativeFree.failure ?? "", 400)}`,
    table(
      ["scenario", "native", "native-free", "native-free / native"],
      report.nativeFree.rows.map((row) => [row.label, withUnit(row.native, row.unit), withUnit(row.nativeFree, row.unit), isNumber(row.ratio) ? `${(row.ratio * 100).toFixed(1)} %` : "—"]),
    ),
    loadTable(bySection("native-free")),
  );

  push(
    "## Scaling curves",
    "### Requests/s against number of features",
    curveTable("features", report.scaling.features),
    "### Requests/s against context size (50 features)",
    curveTable("context params", report.scaling.contextSize),
    loadTable(bySection("scaling")),
    "### Requests/s against worker count (50 features)",
    curveTable("workers", report.scaling.workers),
    "### Resident memory and start-up against stored users and companies",
    report.scaling.storedData.length === 0
      ? "_Not measured._"
      : table(
          ["users + companies", "data on disk", "RSS after loading", "start-up", "RSS after restart", "loading took"],
          report.scaling.storedData.map((point) => [
            `${count(point.users)} + ${count(point.companies)}`,
            mib(point.dataBytes),
            mib(point.rssLoadedBytes),
            ms(point.startupMs),
            mib(point.rssAfterRestartBytes),
            `${point.loadSeconds.toFixed(1)} s`,
          ]),
        ),
    "### Start-up time of each service start",
    table(["start", "spawn → listening"], report.scaling.startup.map((point) => [point.label, ms(point.startupMs)])),
  );

  if (report.extras.length > 0) {
    push(
      "## Stand-alone benchmark scripts",
      ...report.extras.flatMap((extra) => [`### ${extra.name} (exit ${extra.exitCode})`, `\`\`\`\n${extra.output.trimEnd()}\n\`\`\``]),
    );
  }

  push("## Cluster", ...clusterBlocks(report.cluster));
  push(PEERS_HEADING, ...peersBlocks(report.peers));

  const notes = [
    "Load and service share one machine: wrk takes a core, the service the other (and its pool threads compete with both). " +
      "Absolute figures move from machine to machine and with anything else running; compare ratios within one report.",
    "Each service under load starts from the same seeded data; tracking scenarios keep appending to it, so later scenarios see a larger store.",
    "Bulk figures are items projected per second (\"Load: tracking\" says how they are counted); `event` counts calls answered, once logged.",
    "Spread is half of (max − min) over the measured runs, as a share of the median.",
  ];
  if (report.extras.length === 0) {
    notes.push(
      "The stand-alone scripts bench/evaluation/compile-vs-reference and bench/analytics/summary-vs-scan run in full runs only; " +
        "run them alone with `node dist/bench/<path>.js`.",
    );
  }
  push("## Notes", notes.map((note) => `- ${note}`).join("\n"));
  return `${lines.join("\n").trimEnd()}\n`;
}

function stageTable(report: BenchReport): string {
  if (report.stages.length === 0) return "_Not measured._";
  const stages = Object.keys(report.stages[0]!.stages);
  return table(
    ["stage", ...report.stages.map((figure) => `${figure.features} features (µs)`)],
    [
      ...stages.map((stage) => [stage, ...report.stages.map((figure) => (figure.stages as Record<string, number>)[stage]!.toFixed(1))]),
      ["**all threads**", ...report.stages.map((figure) => `**${figure.totalUs.toFixed(1)}**`)],
      ["requests/s while profiled", ...report.stages.map((figure) => count(figure.rps))],
    ],
  );
}

/**
 * How each projected figure was counted: what was acknowledged during the load, how long the projection took to
 * catch up after it, its lag during the load, and the refusals (every section's projected figures, in one table).
 */
function projectionBlocks(figures: readonly LoadFigure[]): string[] {
  const projected = figures.filter((figure) => figure.projection !== undefined);
  if (projected.length === 0) return [];
  return [
    "### Bulk: acknowledged, then projected",
    "A tracking call is answered once its log append commits; users, companies, event logs and analytics are projected from the log after. " +
      "Bulk figures count items once projected: items in requests answered 2xx during the load ÷ (load seconds + seconds from the end of the load until " +
      "GET /health first showed `projection.backlog` and `projection.lagMs` at 0). Each run starts once the projection has caught up with what came before. " +
      "The lag is sampled from /health every ~75 ms during the load. Requests answered 503 PROJECTION_BEHIND are refusals: counted here, their items not counted, not errors.",
    table(
      ["scenario", "id", "projected", "acknowledged during the load", "load", "catch-up after it", "lag p99 (max) during the load", "largest backlog (log records)", "refused", "lag samples per run"],
      projected.map((figure) => {
        const projection = figure.projection!;
        return [
          figure.title,
          figure.id,
          `${count(projection.itemsPerSecond)} items/s`,
          `${count(projection.acknowledgedPerSecond)} items/s`,
          isNumber(projection.loadSeconds) ? `${projection.loadSeconds.toFixed(2)} s` : "—",
          isNumber(projection.catchUpSeconds) ? `${projection.catchUpSeconds.toFixed(2)} s` : "—",
          `${ms(projection.lagP99Ms)} (${ms(projection.lagMaxMs)})`,
          count(projection.backlogMax),
          count(projection.refused),
          projection.runs.map((run) => String(run.lagSamples)).join(", "),
        ];
      }),
    ),
  ];
}

/** What acknowledging after commit leaves of the transport here, and the `/event` figure against it (context, not a target). */
function groupCommitLine(report: BenchReport): string {
  const ceiling = report.comparisons.find((comparison) => comparison.id === GROUP_COMMIT_ID);
  const event = report.comparisons.find((comparison) => comparison.id === EVENT_ID);
  if (ceiling === undefined || !Number.isFinite(ceiling.value)) return "The group-commit ceiling was not measured.";
  const share = event !== undefined && Number.isFinite(event.value) ? ` \`POST /event\` reached ${((event.value / ceiling.value) * 100).toFixed(1)} % of it.` : "";
  return (
    `Acknowledging after commit: a bare uWebSockets.js POST that only parses each body and commits it to LMDB (one commit per event-loop turn, answered after it) ` +
    `reached ${count(ceiling.value)} req/s, ${(ceiling.ratio * 100).toFixed(1)} % of the hello-world POST.${share}`
  );
}

/** The raw-puts ceiling of everything a bulk stores, and the bulk figure against it (context, not a target). */
function bulkRecordsLine(report: BenchReport): string {
  const records = report.baselines.bulkRecords;
  if (!("value" in records)) return `Raw puts of a bulk's records failed: ${records.failure}`;
  const bulk = report.comparisons.find((comparison) => comparison.id === BULK_ID);
  const share = bulk !== undefined && Number.isFinite(bulk.value) ? ` \`POST /bulk\` reached ${((bulk.value / records.value) * 100).toFixed(1)} % of it.` : "";
  return (
    `${records.title}: ${count(records.value)} events/s (runs ${records.runs.map((run) => count(run)).join(", ")}). ` +
    `Besides the event itself, the projection updates each event's user and company and an analytics cell (after the answer, which waits for one log append); ` +
      `the bulk targets compare with the bulk ceiling, which stores each item once.${share}`
  );
}

/** One thread's evaluation alone, per feature count (what bounds a worker's rate; see the evaluate-N bounds). */
function evaluationAloneLine(report: BenchReport): string {
  const alone = report.baselines.evaluationAlone;
  if (!Array.isArray(alone)) return `Evaluation alone failed: ${alone.failure}`;
  const figures = alone.map((entry) => `${entry.features} features ${entry.microsecondsPerAnswer.toFixed(1)} µs (${entry.bytesPerAnswer.toLocaleString("en")} B answers; rounds ${entry.runs.map((run) => run.toFixed(1)).join(", ")})`);
  return (
    `Evaluation alone, in one thread (writeAnswer over the distinct contexts of the load, merged with the seeded attributes; in-process, no HTTP, ` +
    `threads or store; \`node dist/bench/evaluation/write-answer.js --features N\`), µs an answer: ${figures.join("; ")}.`
  );
}
