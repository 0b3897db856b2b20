/**
 * The benchmark harness end to end, in smoke mode (a few requests per scenario): the run finishes, and its JSON and
 * Markdown reports are well-formed with every section present. No timing is judged here — smoke figures mean nothing.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MARKDOWN_SECTIONS } from "../../bench/report/markdown.js";
import { CORE_FIGURE_IDS, type BenchReport } from "../../bench/report/model.js";
import { runNode, type CliRun } from "../support/run-node.js";

const RUNNER = resolve(import.meta.dirname, "../../dist/bench/run.js");

function runSmoke(outDir: string): Promise<CliRun> {
  return runNode([RUNNER, "--smoke", "--out", outDir]);
}

describe("npm run bench -- --smoke", () => {
  let outDir: string;
  let run: Awaited<ReturnType<typeof runSmoke>>;
  let report: BenchReport;
  let markdown: string;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), "switchyard-bench-report-"));
    run = await runSmoke(outDir);
    const files = readdirSync(outDir);
    const json = files.find((file) => file.endsWith(".json"));
    const md = files.find((file) => file.endsWith(".md"));
    if (run.code !== 0 || !json || !md) throw new Error(`smoke run failed (exit ${run.code}, files ${files.join(", ")}):\n${run.stderr}`);
    report = JSON.parse(readFileSync(join(outDir, json), "utf8")) as BenchReport;
    markdown = readFileSync(join(outDir, md), "utf8");
  }, 240_000);

  afterAll(() => {
    rmSync(outDir, { recursive: true, force: true });
  });

  it("writes <date>-<host>.json and .md into --out and names them on stdout", () => {
    const files = readdirSync(outDir).sort();
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(/^\d{4}-\d{2}-\d{2}-.+\.json$/);
    expect(files[1]).toBe(files[0]!.replace(/\.json$/, ".md"));
    for (const file of files) expect(run.stdout).toContain(file);
  });

  it("records how, where and when it ran", () => {
    expect(report.schema).toBe(1);
    expect(report.meta.mode).toBe("smoke");
    expect(report.meta.command).toContain("--smoke");
    expect(report.meta.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(report.meta.cpus.count).toBeGreaterThan(0);
    expect(report.meta.load.repeats).toBeGreaterThan(0);
    expect(["wrk", "autocannon", "probe"]).toContain(report.meta.driver);
  });

  it("has every micro-benchmark, with the compiled evaluator set against the reference", () => {
    const groups = new Set(report.micro.map((figure) => figure.group));
    expect(groups).toEqual(
      new Set(["evaluate 10 features", "evaluate 50 features", "context from query (6 params)", "context from query (24 params)", "rollout hash", "answer copy, 15 KB", "event record codec", "bulk body of 1,000 events"]),
    );
    for (const figure of report.micro) expect(figure.opsPerSecond).toBeGreaterThan(0);
    const targeted = report.microComparisons.filter((comparison) => comparison.target !== undefined).map((comparison) => comparison.id);
    expect(targeted).toEqual(["compiled-vs-reference-10", "compiled-vs-reference-50"]);
  });

  it("measures the baselines and every core load scenario without failures or errors", () => {
    expect("value" in report.baselines.lmdbPuts && report.baselines.lmdbPuts.value > 0).toBe(true);
    expect("value" in report.baselines.bulkRecords && report.baselines.bulkRecords.recordsPerEvent > 1).toBe(true);
    // Evaluation alone, in-process, at each feature count the load scenarios evaluate (smoke: 10 and 50).
    const alone = report.baselines.evaluationAlone;
    expect(Array.isArray(alone) ? alone.map((entry) => entry.features) : alone).toEqual([10, 50]);
    for (const entry of alone as Exclude<typeof alone, { failure: string }>) {
      expect(entry.microsecondsPerAnswer).toBeGreaterThan(0);
      expect(entry.bytesPerAnswer).toBeGreaterThan(entry.features * 50);
    }
    const byId = new Map(report.load.map((figure) => [figure.id, figure]));
    for (const id of CORE_FIGURE_IDS) {
      const figure = byId.get(id);
      expect(figure, id).toBeDefined();
      expect(figure!.failure, id).toBeUndefined();
      expect(figure!.runs.length, id).toBe(report.meta.load.repeats);
      expect(figure!.value, id).toBeGreaterThan(0);
      expect(figure!.errors, id).toBe(0);
    }
    expect(byId.get("bulk-1000")!.unit).toBe("events/s");
  });

  it("counts bulk items once projected, with the lag during the load and the catch-up after it", () => {
    for (const id of ["bulk-1000", "bulk-mixed-1000"]) {
      const figure = report.load.find((entry) => entry.id === id)!;
      const projection = figure.projection!;
      expect(projection, id).toBeDefined();
      expect(projection.runs, id).toHaveLength(report.meta.load.repeats);
      expect(projection.catchUpSeconds, id).toBeGreaterThanOrEqual(0);
      expect(projection.acknowledgedPerSecond, id).toBeGreaterThan(0);
      // Projected per second over the load and the catch-up: never more than what was acknowledged per second of load.
      expect(projection.itemsPerSecond, id).toBeLessThanOrEqual(projection.acknowledgedPerSecond);
      expect(figure.value, id).toBe(projection.itemsPerSecond);
      for (const run of projection.runs) expect(run.lagSamples, id).toBeGreaterThan(0);
      expect(report.comparisons.find((comparison) => comparison.id === id)!.baselineId, id).toBe("group-commit-uws-bulk");
    }
    expect(markdown).toContain("### Bulk: acknowledged, then projected");
  });

  it("keeps the ledger: each thread's CPU per request beside the bare same-bytes server's, with the goals judged", () => {
    const rows = new Map(report.ledger.rows.map((row) => [row.id, row]));
    for (const [id, baseline] of [
      ["evaluate-10", "hello-uws-get-10-features"],
      ["evaluate-50", "hello-uws-get-50-features"],
      ["enabled-50", "hello-uws-get-50-features"],
      ["event", "group-commit-uws-post"],
      ["bulk-mixed-1000", "group-commit-uws-bulk"],
    ] as const) {
      const row = rows.get(id);
      expect(row?.baselineId, id).toBe(baseline);
      // The service's job workers name themselves, so their CPU is told apart from the front end's.
      expect(row!.service!.workers.length, id).toBe(1);
      expect(row!.service!.total, id).toBeGreaterThanOrEqual(row!.service!.frontEnd);
      expect(row!.baseline!.workers, id).toEqual([]);
    }
    expect(report.ledger.goals).toHaveLength(7);
    expect(markdown).toContain("## CPU per request: the ledger");
  });

  it("measures the paced mix's parts alone, at shares of its rate that add up to it", () => {
    const offered = (id: string) => report.load.find((figure) => figure.id === id)?.offeredRate;
    const parts = ["mixed-70-evaluations-alone", "mixed-70-events-alone", "mixed-70-group-commit-alone"];
    for (const id of parts) expect(report.load.find((figure) => figure.id === id)?.section, id).toBe("mixed");
    expect(offered("mixed-70-evaluations-alone")! + offered("mixed-70-events-alone")!).toBe(offered("mixed-70"));
    expect(offered("mixed-70-group-commit-alone")).toBe(offered("mixed-70-events-alone"));
    expect(report.load.find((figure) => figure.id === "mixed-70-group-commit-alone")!.server.kind).toBe("group-commit");
  });

  it("sets every figure against a baseline and gives a verdict for each target", () => {
    expect(report.comparisons.map((comparison) => comparison.id)).toEqual(report.load.map((figure) => figure.id));
    expect(report.targets.map((target) => target.id)).toEqual([
      "evaluate-10",
      "evaluate-50",
      "evaluate-200",
      "evaluate-1000",
      "enabled-50",
      "event",
      "bulk-1000",
      "bulk-mixed-1000",
      "mixed-70",
      "cpu-per-request-50",
      "evaluate-10-same-bytes",
      "evaluate-50-same-bytes",
      "evaluate-1000-same-bytes",
      "evaluate-10-idle",
      "evaluate-50-idle",
      "cpu-per-request-50-unprofiled",
      "compiled-vs-reference-10",
      "compiled-vs-reference-50",
    ]);
    for (const target of report.targets) {
      expect(["PASS", "MISS"]).toContain(target.verdict);
      expect(target.target).toBeTruthy();
    }
  });

  it("breaks the CPU of a distinct-context evaluation down by stage, at 10 and 50 features", () => {
    expect(report.stages.map((figure) => figure.features)).toEqual([10, 50]);
    for (const figure of report.stages) {
      expect(figure.requests).toBeGreaterThan(0);
      const sum = Object.values(figure.stages).reduce((total, value) => total + value, 0);
      // The stages share out the whole of the threads' CPU.
      expect(Math.abs(sum - figure.totalUs)).toBeLessThan(figure.totalUs * 0.01 + 0.01);
      expect(figure.stages["evaluation (rules)"] + figure.stages["rollout hashing"]).toBeGreaterThan(0);
    }
  });

  it("names the fastest executor arrangement for evaluation, tracking and bulk", () => {
    expect(report.executors.map((verdict) => verdict.workload)).toEqual(["evaluation", "tracking", "bulk"]);
    for (const verdict of report.executors) {
      expect(verdict.rows.map((row) => row.workers)).toEqual([0, 1, 2]);
      expect(["inline", "pool-1", "pool-2"]).toContain(verdict.fastest);
    }
  });

  it("sets native-free figures beside the native ones, or says why it could not", () => {
    expect(report.nativeFree.rows.map((row) => row.id)).toEqual(["nf-evaluate-10", "nf-evaluate-50", "nf-rules-50", "nf-event", "nf-bulk-1000"]);
    if (report.nativeFree.available) {
      for (const row of report.nativeFree.rows) expect(row.nativeFree, row.id).toBeGreaterThan(0);
    } else {
      expect(report.nativeFree.failure).toBeTruthy();
    }
  });

  it("has the scaling curves: features, context size, workers, memory and start-up against stored data", () => {
    expect(report.scaling.features.map((point) => point.x)).toEqual([10, 50]);
    expect(report.scaling.contextSize.map((point) => point.x)).toEqual([2, 6]);
    expect(report.scaling.workers.map((point) => point.x)).toEqual([0, 1, 2]);
    expect(report.scaling.storedData.map((point) => point.users)).toEqual([0, 100]);
    for (const point of report.scaling.storedData) {
      expect(point.startupMs).toBeGreaterThan(0);
      expect(point.dataBytes).toBeGreaterThan(0);
    }
    expect(report.scaling.startup.length).toBeGreaterThanOrEqual(report.scaling.storedData.length);
  });

  it("sets the cluster node against the standalone node of the same run, or says why it could not", () => {
    const { cluster } = report;
    if (cluster.skipped !== undefined) {
      expect(cluster.skipped).toMatch(/nats-server/);
      expect(markdown).toContain("_Not measured: ");
      return;
    }
    expect(cluster.load.map((figure) => figure.id)).toEqual(["standalone-evaluate-10", "standalone-evaluate-50", "standalone-event", "cluster-evaluate-10", "cluster-evaluate-50", "cluster-event"]);
    for (const figure of cluster.load) {
      expect(figure.failure, figure.id).toBeUndefined();
      expect(figure.errors, figure.id).toBe(0);
    }
    for (const row of cluster.rows) {
      // CPU comes from /proc in 10 ms ticks: a smoke run's few requests may spend less than one on a side.
      if (row.id.endsWith("-cpu")) {
        expect(row.cluster, row.id).toBeGreaterThanOrEqual(0);
        expect(row.standalone, row.id).toBeGreaterThanOrEqual(0);
      } else expect(row.ratio, row.id).toBeGreaterThan(0);
    }
    expect(cluster.propagation).toMatchObject({ changes: 3 });
    expect("failure" in cluster.catchUp ? cluster.catchUp.failure : cluster.catchUp.events).toBe(1000);
  });

  it("renders every section in the Markdown report, with a PASS/MISS for each target", () => {
    expect(markdown.startsWith("# Switchyard benchmarks")).toBe(true);
    let last = -1;
    for (const heading of MARKDOWN_SECTIONS) {
      const at = markdown.indexOf(`\n${heading}\n`);
      expect(at, heading).toBeGreaterThan(last);
      last = at;
    }
    const targets = markdown.slice(markdown.indexOf("## Targets"), markdown.indexOf("## Every figure"));
    expect(targets.match(/\| (PASS|MISS) \|/g)).toHaveLength(report.targets.length);
    const baselines = markdown.slice(markdown.indexOf("\n## Baselines\n"), markdown.indexOf("\n## Load: evaluation\n"));
    expect(baselines).toMatch(/Evaluation alone, in one thread .*: 10 features \d+\.\d µs \([\d,]+ B answers; rounds [\d.]+\); 50 features \d+\.\d µs/);
    // Well-formed tables: every row of a table has as many cells as its header.
    for (const block of markdown.split("\n\n").filter((part) => part.startsWith("| "))) {
      const rows = block.split("\n");
      const cells = (row: string) => row.replace(/\\\|/g, "").split("|").length;
      for (const row of rows) expect(cells(row), row).toBe(cells(rows[0]!));
    }
  });

  it("says, for every target it misses, what bounds it", () => {
    const section = markdown.slice(markdown.indexOf("## What bounds the targets missed"), markdown.indexOf("## Every figure against its baseline"));
    const missed = report.targets.filter((target) => target.verdict === "MISS");
    if (missed.length === 0) expect(section).toContain("Every target was met");
    for (const target of missed) expect(section, target.id).toMatch(new RegExp(`^- \\*\\*${target.id}\\*\\* \\(`, "m"));
  });

  it("measures how idle the machine was and the server's CPU per request during each run (Linux /proc)", () => {
    for (const id of ["evaluate-10", "event", "group-commit-uws-post"]) {
      const figure = report.load.find((entry) => entry.id === id)!;
      expect(figure.machineIdleShare, id).toBeGreaterThanOrEqual(0);
      expect(figure.machineIdleShare, id).toBeLessThanOrEqual(1);
      // A smoke run's few requests may round to zero 10 ms ticks: present and not negative is what can be checked.
      expect(figure.serverCpuUsPerItem, id).toBeGreaterThanOrEqual(0);
    }
  });
});
