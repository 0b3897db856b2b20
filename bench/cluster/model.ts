/** What the cluster benchmark reports (bench/cluster/cluster-bench.ts), in the JSON report under `cluster`. */
import type { LoadFigure } from "../support/lab.js";

/** A figure of the cluster node set against the same figure of the standalone node measured in the same run. */
export interface ClusterRow {
  id: string;
  label: string;
  unit: string;
  cluster: number;
  standalone: number;
  /** cluster / standalone. */
  ratio: number;
}

/** Server CPU per request, from /proc: the Switchyard node's process, and for the cluster the three nats-servers too. */
export interface CpuPerRequest {
  id: string;
  label: string;
  requests: number;
  /** µs of the Switchyard process per request. */
  nodeUs: number;
  /** µs of all nats-server processes per request (0 for the standalone node). */
  natsUs: number;
}

export interface PropagationFigure {
  /** Flag changes made through node A, each awaited as `flags-updated` on an SSE stream held on node B. */
  changes: number;
  /** From sending the change to A until B's stream delivered its flagStateVersion. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** How long A took to answer the change itself (it answers once applied locally), p50. */
  writeP50Ms: number;
}

export interface CatchUpFigure {
  /** Tracked events waiting in the stream when the fresh node started. */
  events: number;
  /** Tracking log messages the fresh node applied (requests arriving together share one). */
  messages: number;
  /** From spawning the fresh node until it applied the tracking stream's last message (includes its start-up). */
  secondsFromSpawn: number;
  /** From the node's "listening" line until then (it starts applying before it listens, so this is a lower bound). */
  secondsFromListening: number;
  /** events / secondsFromSpawn: a lower bound on the apply rate. */
  eventsPerSecond: number;
}

export interface ClusterSection {
  /** Set when the cluster benchmark did not run (nats-server missing, or it failed); the rest is then empty. */
  skipped?: string;
  /** nats-server version used. */
  natsVersion?: string;
  load: LoadFigure[];
  rows: ClusterRow[];
  cpu: CpuPerRequest[];
  /** Extra CPU per tracked event in cluster mode (node + NATS − standalone), µs; NaN when not measured. */
  replicationCpuUsPerEvent: number;
  /** Extra p50 latency of POST /event in cluster mode (quorum write), ms. */
  replicationLatencyP50Ms: number;
  propagation: PropagationFigure | { failure: string };
  catchUp: CatchUpFigure | { failure: string };
}

export function skippedCluster(reason: string): ClusterSection {
  return {
    skipped: reason,
    load: [],
    rows: [],
    cpu: [],
    replicationCpuUsPerEvent: Number.NaN,
    replicationLatencyP50Ms: Number.NaN,
    propagation: { failure: reason },
    catchUp: { failure: reason },
  };
}
