/** The "## Cluster" section of the report, also printed alone by bench/cluster/run-cluster.ts. */
import { count, isNumber, ms, shorten, table, withUnit } from "../report/format.js";
import { loadTable } from "../report/load-table.js";
import type { ClusterSection } from "./model.js";

/** The "## Cluster" section alone (bench/cluster/run-cluster.ts prints it). */
export function renderClusterMarkdown(cluster: ClusterSection): string {
  return `${["## Cluster", ...clusterBlocks(cluster)].join("\n\n")}\n`;
}

/** Cluster mode against the standalone node of the same run (bench/cluster/cluster-bench.ts). */
export function clusterBlocks(cluster: ClusterSection): string[] {
  if (cluster.skipped !== undefined) return [`_Not measured: ${shorten(cluster.skipped, 300)}._`];
  const times = (value: number) => (isNumber(value) ? `${value.toFixed(2)}×` : "—");
  const value = (amount: number, unit: string) => (unit === "ms" ? ms(amount) : unit === "µs" ? (isNumber(amount) ? `${amount.toFixed(1)} µs` : "—") : withUnit(amount, unit));
  const propagation = cluster.propagation;
  const catchUp = cluster.catchUp;
  return [
    `One Switchyard node in cluster mode (R3 streams on a three-server ${cluster.natsVersion ?? "nats-server"} JetStream cluster on this machine) against one standalone node, ` +
      "same pool, same seeded data shape, measured one after the other. Cluster CPU counts the node and all three NATS servers. " +
      "On one machine the cluster can only cost: the figures show the overhead, not a speed-up (docs/CLUSTER.md has the sizing arithmetic).",
    table(
      ["figure", "cluster", "standalone", "cluster / standalone"],
      cluster.rows.map((row) => [row.label, value(row.cluster, row.unit), value(row.standalone, row.unit), times(row.ratio)]),
    ),
    table(
      ["measure", "value"],
      [
        ["replication cost per tracked event: extra server CPU (node + NATS − standalone)", isNumber(cluster.replicationCpuUsPerEvent) ? `${cluster.replicationCpuUsPerEvent.toFixed(1)} µs` : "—"],
        ["replication cost per tracked event: extra p50 latency (quorum write before the answer)", ms(cluster.replicationLatencyP50Ms)],
        [
          "propagation of a flag change from node A to an SSE stream on node B",
          "failure" in propagation ? `failed: ${shorten(propagation.failure)}` : `p50 ${ms(propagation.p50Ms)}, p99 ${ms(propagation.p99Ms)}, max ${ms(propagation.maxMs)} over ${propagation.changes} changes (A answered each change in ${ms(propagation.writeP50Ms)} p50)`,
        ],
        [
          "catch-up of a node that starts empty",
          "failure" in catchUp
            ? `failed: ${shorten(catchUp.failure)}`
            : `${count(catchUp.eventsPerSecond)} events/s: ${count(catchUp.events)} events (${count(catchUp.messages)} tracking messages) in ${catchUp.secondsFromSpawn.toFixed(2)} s from spawn (${catchUp.secondsFromListening.toFixed(2)} s after listening)`,
        ],
      ],
    ),
    table(
      ["scenario", "requests", "node µs/request", "NATS µs/request"],
      cluster.cpu.map((row) => [row.label, count(row.requests), isNumber(row.nodeUs) ? row.nodeUs.toFixed(1) : "—", isNumber(row.natsUs) ? row.natsUs.toFixed(1) : "—"]),
    ),
    loadTable(cluster.load),
  ];
}
