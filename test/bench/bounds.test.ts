/** The report's "what bounds the targets missed": built from figures of one run, one bullet per missed target. */
import { describe, expect, it } from "vitest";
import { boundsOfMissedTargets } from "../../bench/report/bounds.js";
import { buildReport, type Measurements } from "../../bench/report/model.js";
import type { LoadFigure, ServerInfo } from "../../bench/support/lab.js";
import { figure } from "./load-figure.js";
import { spread } from "../../bench/support/stats.js";
import type { StageFigure } from "../../bench/serving/evaluation-stages.js";

const SERVICE: ServerInfo = { kind: "service", workers: 1, native: true };

function measurements(load: LoadFigure[]): Measurements {
  return {
    meta: { cpus: { count: 2, model: "test" } } as Measurements["meta"],
    micro: [],
    lmdbPuts: { id: "lmdb-raw-puts", title: "raw puts", unit: "events/s", putsPerTransaction: 1000, runs: [400_000], value: 400_000, spread: spread([400_000]), microsecondsPerEvent: 2.5 },
    bulkRecords: { id: "lmdb-raw-bulk-records", title: "raw puts of a bulk's records", recordsPerEvent: 3.4, value: 180_000, runs: [180_000] },
    evaluationAlone: [{ features: 10, microsecondsPerAnswer: 8, runs: [8], answersPerRound: 1_000, bytesPerAnswer: 3_000 }],
    eventRecordBytes: { msgpackBytes: 100, jsonBytes: 150 },
    load,
    nativeFreeFailure: undefined,
    storedData: [],
    startup: [],
    extras: [],
    stages: [],
    cluster: { skipped: "not in this test", load: [], rows: [] } as unknown as Measurements["cluster"],
  };
}

describe("boundsOfMissedTargets", () => {
  const report = buildReport(
    measurements([
      figure("hello-uws-get", 100_000, { kind: "hello-uws" }),
      figure("hello-uws-get-10-features", 90_000, { kind: "hello-uws" }),
      figure("evaluate-10", 30_000, SERVICE, { machineIdleShare: 0.3, serverCpuUsPerItem: 40 }),
      figure("evaluate-10-repeated", 50_000, SERVICE),
      figure("evaluate-50", 20_000, SERVICE),
      // 85 % of evaluate-50: met (the target is 80 %).
      figure("enabled-50", 17_000, SERVICE),
      figure("group-commit-uws-post", 40_000, { kind: "group-commit" }, { serverCpuUsPerItem: 20 }),
      figure("event", 14_000, SERVICE, { serverCpuUsPerItem: 70, machineIdleShare: 0.05 }),
      figure("group-commit-uws-event-records", 26_000, { kind: "group-commit" }),
    ]),
  );
  const bounds = boundsOfMissedTargets(report);
  const bulletOf = (id: string) => bounds.find((line) => line.startsWith(`- **${id}** (`));

  it("writes one bullet per missed target and none for a met one", () => {
    const missed = report.targets.filter((target) => target.verdict === "MISS").map((target) => target.id);
    expect(missed).toContain("evaluate-10");
    expect(bounds).toHaveLength(missed.length);
    expect(report.targets.find((target) => target.id === "enabled-50")!.verdict).toBe("PASS");
    expect(bulletOf("enabled-50")).toBeUndefined();
  });

  it("sets an evaluation target against the service answering from its cache and the transport of the same answer", () => {
    const line = bulletOf("evaluate-10")!;
    expect(line).toContain("measured 30.0 %");
    expect(line).toContain("reached 50.0 % of the hello-world, below the target before evaluation costs anything");
    expect(line).toContain("an answer of this size reached 90.0 %");
    expect(line).toContain("30.0 % of the machine's CPU");
    // 2 cores at 40 µs per request: 50,000/s at most, where 60 % of 100,000 is 60,000.
    expect(line).toContain("all 2 cores could serve at most 50,000/s, 50.0 % of the baseline");
    expect(line).toContain("the target needs 60,000/s, so at most 33.3 µs per request");
  });

  it("sets /features/enabled's CPU per call against /features/evaluated's when it misses", () => {
    const missing = buildReport(
      measurements([
        figure("hello-uws-get", 100_000, { kind: "hello-uws" }),
        figure("evaluate-50", 20_000, SERVICE, { serverCpuUsPerItem: 50 }),
        figure("enabled-50", 10_000, SERVICE, { serverCpuUsPerItem: 130, machineIdleShare: 0.2 }),
      ]),
    );
    const line = boundsOfMissedTargets(missing).find((bullet) => bullet.startsWith("- **enabled-50** ("))!;
    expect(line).toContain("measured 50.0 %");
    expect(line).toContain("130.0 µs of CPU per call");
    expect(line).toContain("/features/evaluated at 50 features 50.0 µs: the check events cost 80.0 µs a call, 2.6×");
    // 2 cores at 130 µs: 15,385/s at most, where 80 % of 20,000 is 16,000.
    expect(line).toContain("all 2 cores could serve at most 15,385/s, 76.9 % of the baseline");
    expect(line).toContain("the target needs 16,000/s, so at most 125.0 µs per request");
    expect(line).toContain("20.0 % of the machine's CPU");
  });

  it("sets a single event's CPU against the group-commit server's", () => {
    const line = bulletOf("event")!;
    expect(line).toContain("70.0 µs of CPU per call");
    expect(line).toContain("group-commit server 20.0 µs");
    expect(line).toContain("3.5× the CPU");
    expect(line).toContain("all 2 cores could serve at most 28,571/s");
    expect(line).toContain("95.0 % busy");
    // The same bodies stored as the service stores them, by a bare server: 26,000 of the ceiling's 40,000.
    expect(line).toContain("the log append the answer waits for");
    expect(line).toContain(
      "(event, user, company and analytics cells, by the service's own writer, one commit per turn, answered after it; group-commit-uws-event-records) reached 65.0 % of the ceiling: had the answer waited for all of it",
    );
  });

  it("sets a bulk target against what was acknowledged, the projection's catch-up and lag, and the records it stores", () => {
    const projection = {
      itemsPerSecond: 60_000,
      acknowledgedPerSecond: 90_000,
      loadSeconds: 4,
      catchUpSeconds: 2,
      lagP99Ms: 850,
      lagMaxMs: 990,
      backlogMax: 40,
      refused: 3,
      runs: [],
    };
    const measured = measurements([
      figure("group-commit-uws-bulk", 200_000, { kind: "group-commit" }, { unit: "events/s", itemsPerRequest: 1000 }),
      figure("bulk-mixed-1000", 60_000, SERVICE, { unit: "events/s", itemsPerRequest: 1000, projection }),
    ]);
    const report = buildReport(measured);
    const target = report.targets.find((entry) => entry.id === "bulk-mixed-1000")!;
    expect(target.baselineId).toBe("group-commit-uws-bulk");
    expect(target.ratio).toBeCloseTo(0.3);
    expect(target.label).toContain("projection lag p99 850 ms during the load, caught up 2.00 s after it, 3 requests refused");
    const line = boundsOfMissedTargets(report).find((bullet) => bullet.startsWith("- **bulk-mixed-1000** ("))!;
    expect(line).toContain("acknowledged 90,000 items/s, the projection caught up 2.00 s after it (lag p99 850 ms during it) and 3 bodies were refused");
    expect(line).toContain("so 60,000 items/s projected: the projection, not the answer, bounds the rate");
    expect(line).toContain("3.40 records per event, where the bulk ceiling (group-commit-uws-bulk) stores each item once");
    expect(line).not.toContain("before the answer");
  });

  it("sets an evaluation target against what the worker threads could answer were evaluation their only cost", () => {
    const lineWith = (microsecondsPerAnswer: number, workers: number) => {
      const measured = measurements([figure("hello-uws-get", 100_000, { kind: "hello-uws" }), figure("evaluate-200", 9_000, { kind: "service", workers, native: true })]);
      measured.evaluationAlone = [{ features: 200, microsecondsPerAnswer, runs: [microsecondsPerAnswer], answersPerRound: 1_000, bytesPerAnswer: 60_000 }];
      return boundsOfMissedTargets(buildReport(measured)).find((bullet) => bullet.startsWith("- **evaluate-200** ("))!;
    };
    // One worker at 80 µs an answer: 12,500/s, where 15 % of 100,000 is 15,000.
    expect(lineWith(80, 1)).toContain("took 80.0 µs an answer, so the one worker thread could answer at most 12,500/s, 12.5 % of the hello-world, were every other cost nothing, below the target");
    // Two workers at 50 µs: 40,000/s, above the target: no "below the target".
    const two = lineWith(50, 2);
    expect(two).toContain("its 2 worker threads could answer at most 40,000/s, 40.0 % of the hello-world, were every other cost nothing");
    expect(two).not.toContain("below the target before any transport");
  });

  it("says so where the run measured nothing to bound a target with", () => {
    expect(bulletOf("evaluate-200")).toContain("This run measured no bound for it.");
    expect(bulletOf("cpu-per-request-50")).toContain("the stages were not measured in this run.");
  });

  it("sets the paced mix's p99 against its parts alone at their shares of its rate, naming those already past the target", () => {
    const latency = (p99: number) => ({ latencyMs: { p50: 1, p90: 2, p99 } });
    const mixed = (groupCommitP99: number) =>
      buildReport(
        measurements([
          figure("hello-uws-get", 100_000, { kind: "hello-uws" }),
          figure("mixed-max", 10_000, SERVICE, latency(19.5)),
          figure("mixed-70", 7_000, SERVICE, latency(8.2)),
          figure("mixed-70-evaluations-alone", 5_600, SERVICE, latency(4.1)),
          figure("mixed-70-events-alone", 1_400, SERVICE, latency(6.3)),
          figure("mixed-70-group-commit-alone", 1_400, { kind: "group-commit" }, latency(groupCommitP99)),
        ]),
      );
    const lineOf = (report: ReturnType<typeof buildReport>) => boundsOfMissedTargets(report).find((bullet) => bullet.startsWith("- **mixed-70** ("))!;
    const slowDisk = lineOf(mixed(5.4));
    expect(slowDisk).toContain("measured p99 8.20 ms");
    expect(slowDisk).toContain("the unpaced mix had p99 19.50 ms");
    expect(slowDisk).toContain("its evaluations alone p99 4.10 ms (mixed-70-evaluations-alone)");
    expect(slowDisk).toContain("the bare group-commit server at the events' rate p99 5.40 ms (mixed-70-group-commit-alone)");
    expect(slowDisk).toContain("already past the 5 ms target alone: its POST /event alone and the bare group-commit server at the events' rate");
    // Only the service's own /event is past it when the bare server is not: then that is what the line names.
    expect(lineOf(mixed(2.2))).toContain("already past the 5 ms target alone: its POST /event alone, so");
  });

  it("sets issue 33's targets against the bare server sending the same bytes: its CPU per request and the idle it leaves", () => {
    const report = buildReport(
      measurements([
        figure("hello-uws-get", 100_000, { kind: "hello-uws" }),
        figure("hello-uws-get-50-features", 50_000, { kind: "hello-uws" }, { serverCpuUsPerItem: 14.5, machineIdleShare: 0.12 }),
        figure("evaluate-50", 20_000, SERVICE, { serverCpuUsPerItem: 55.2, machineIdleShare: 0.31 }),
      ]),
    );
    const bullet = (id: string) => boundsOfMissedTargets(report).find((line) => line.startsWith(`- **${id}** (`))!;
    expect(bullet("evaluate-50-same-bytes")).toContain("55.2 µs of CPU per request over all its threads, the bare server sending the same bytes 14.5 µs (hello-uws-get-50-features): 40.7 µs a request");
    expect(bullet("evaluate-50-idle")).toContain("the machine sat 31.0 % idle under evaluate-50 and 12.0 % under the bare server");
    expect(bullet("evaluate-50-idle")).toContain("the service's threads taking turns");
    expect(bullet("evaluate-50-same-bytes")).not.toContain("taking turns");
    // No stages in this run: the unprofiled CPU target says so, as the profiled one does.
    expect(bullet("cpu-per-request-50-unprofiled")).toContain("the stages were not measured in this run.");
  });

  it("bounds the 1,000-feature same-bytes target by evaluation alone and, for its p99, by the closed loop's mean latency", () => {
    const measured = measurements([
      figure("hello-uws-get", 100_000, { kind: "hello-uws" }),
      figure("hello-uws-get-1000-features", 6_000, { kind: "hello-uws" }, { serverCpuUsPerItem: 80, machineIdleShare: 0.2 }),
      figure("evaluate-1000", 1_800, SERVICE, { serverCpuUsPerItem: 640, machineIdleShare: 0.3, latencyMs: { p50: 24, p90: 30, p99: 39 } }),
    ]);
    measured.evaluationAlone = [{ features: 1000, microsecondsPerAnswer: 400, runs: [400], answersPerRound: 1_000, bytesPerAnswer: 300_000 }];
    const line = boundsOfMissedTargets(buildReport(measured)).find((bullet) => bullet.startsWith("- **evaluate-1000-same-bytes** ("))!;
    // One worker at 400 µs an answer: at most 2,500/s, 41.7 % of the bare server's 6,000.
    expect(line).toContain("took 400.0 µs an answer, so the one worker thread could answer at most 2,500/s, 41.7 % of the same-bytes limit");
    expect(line).toContain("below the target before any transport, hop or remote context");
    // 50 connections at 1,800/s: a mean of 27.8 ms; under 25 ms needs 2,000/s.
    expect(line).toContain("the mean latency is connections ÷ rate = 27.8 ms, so a p99 under 25 ms needs at least 2,000 req/s");
  });

  it("says so when a run measured the mix but not its parts alone", () => {
    const report = buildReport(measurements([figure("mixed-max", 10_000, SERVICE), figure("mixed-70", 7_000, SERVICE, { latencyMs: { p50: 1, p90: 2, p99: 9 } })]));
    expect(boundsOfMissedTargets(report).find((bullet) => bullet.startsWith("- **mixed-70** ("))).toContain("this run did not measure the mix's parts alone at their shares of its rate.");
  });

  it("sets the CPU per request against what the stages spent before the rules themselves ran", () => {
    const measured = measurements([figure("hello-uws-get", 100_000, { kind: "hello-uws" }), figure("evaluate-50", 20_000, SERVICE)]);
    const stages = { "HTTP transport and response write": 18, "thread hop": 8, "rollout hashing": 9, "evaluation (rules)": 8 } as Record<string, number>;
    measured.stages = [{ title: "50 features", features: 50, workers: 1, requests: 1_000, rps: 20_000, totalUs: 50, stages } as StageFigure];
    const line = boundsOfMissedTargets(buildReport(measured)).find((bullet) => bullet.startsWith("- **cpu-per-request-50** ("))!;
    expect(line).toContain("26.0 µs before any evaluation");
    expect(line).toContain("took 9.0 µs more, 35.0 µs before the rules themselves");
    // Issue 33's unprofiled target: the same stages in their shares of the unprofiled CPU (no such figure here).
    expect(boundsOfMissedTargets(buildReport(measured)).find((bullet) => bullet.startsWith("- **cpu-per-request-50-unprofiled** ("))).not.toContain("In their shares");
  });

  it("sets the unprofiled CPU per request against the same stages in their shares of it", () => {
    const measured = measurements([figure("hello-uws-get", 100_000, { kind: "hello-uws" }), figure("evaluate-50", 20_000, SERVICE, { serverCpuUsPerItem: 40 })]);
    const stages = { "HTTP transport and response write": 18, "thread hop": 8, "rollout hashing": 9, "evaluation (rules)": 15 } as Record<string, number>;
    measured.stages = [{ title: "50 features", features: 50, workers: 1, requests: 1_000, rps: 20_000, totalUs: 50, stages } as StageFigure];
    const line = boundsOfMissedTargets(buildReport(measured)).find((bullet) => bullet.startsWith("- **cpu-per-request-50-unprofiled** ("))!;
    // 35 of 50 profiled µs is 70 %: 28.0 of the unprofiled 40.
    expect(line).toContain("In their shares of the unprofiled 40.0 µs, those three stages come to 28.0 µs a request.");
  });

  it("says whether a second worker served more or less at 50 features, without a signed percentage", () => {
    const lineWith = (twoWorkers: number) => {
      const measured = measurements([
        figure("hello-uws-get", 100_000, { kind: "hello-uws" }),
        figure("evaluate-50", 20_000, SERVICE),
        figure("executor-pool-2-evaluate-50", twoWorkers, { kind: "service", workers: 2, native: true }),
        figure("evaluate-200", 5_000, SERVICE),
      ]);
      return boundsOfMissedTargets(buildReport(measured)).find((bullet) => bullet.startsWith("- **evaluate-200** ("))!;
    };
    expect(lineWith(19_000)).toContain("a second worker served 5.0 % less in this run");
    expect(lineWith(22_000)).toContain("a second worker served 10.0 % more in this run");
  });
});
