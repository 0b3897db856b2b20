import { jetstreamManager, type JetStreamManager, type StreamConfig } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import type { ClusterConfig } from "../config/config.js";
import type { Logger } from "../observability/logger.js";

/** The names every node derives from the prefix, so nodes of one deployment find each other's streams. */
export interface StreamNames {
  config: string;
  tracking: string;
  configSubjects: string;
  trackingSubject: string;
  /** The KV bucket where each node reports its position (`switchyard cluster status`). */
  registry: string;
  /** Subject prefix of configuration changes (`<prefix>.config.`). */
  configSubjectPrefix: string;
  trackingConsumer(nodeId: string): string;
}

/**
 * A region's nodes use streams of their own (`<prefix>_<region>`): a pinned app's configuration and tracking are
 * published there and nowhere else, and nodes of other regions never receive them.
 */
export function streamNames(basePrefix: string, region?: string): StreamNames {
  const prefix = region === undefined ? basePrefix : `${basePrefix}_${region}`;
  return {
    config: `${prefix}_CONFIG`,
    tracking: `${prefix}_TRACKING`,
    configSubjects: `${prefix}.config.>`,
    configSubjectPrefix: `${prefix}.config.`,
    trackingSubject: `${prefix}.tracking`,
    registry: `${prefix}_nodes`,
    trackingConsumer: (nodeId) => `tracking_${nodeId}`,
  };
}

const NANOS_PER_MS = 1_000_000;
/** How long JetStream remembers message ids: a publish retried within it is stored once. */
export const DUPLICATE_WINDOW_MS = 120_000;

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Creates the two streams and the node registry when missing (every node tries; the first wins). Both streams keep
 * everything (limits retention, no age limit): a new node catches up by replaying them from the start. Retries until
 * JetStream answers, which in a freshly started cluster waits for its metadata leader.
 */
export async function ensureStreams(nc: NatsConnection, config: ClusterConfig, names: StreamNames, log: Logger): Promise<{ jsm: JetStreamManager; registry: KV }> {
  const common: Partial<StreamConfig> = {
    num_replicas: config.replicas,
    duplicate_window: DUPLICATE_WINDOW_MS * NANOS_PER_MS,
    storage: "file" as StreamConfig["storage"],
    // Direct gets are answered by each server from its own copy: how an operator (and the tests) can check that the
    // servers' copies agree (docs/CLUSTER.md). Nodes never read through them. nats-server 2.9 allows them only at creation.
    allow_direct: true,
  };
  for (let attempt = 1; ; attempt++) {
    try {
      const jsm = await jetstreamManager(nc, { timeout: 5_000 });
      for (const [name, subjects] of [
        [names.config, [names.configSubjects]],
        [names.tracking, [names.trackingSubject]],
      ] as const) {
        try {
          await jsm.streams.info(name);
        } catch {
          try {
            await jsm.streams.add({ ...common, name, subjects: [...subjects] });
            log.info("cluster stream created", { stream: name, replicas: config.replicas });
          } catch (error) {
            // Another node created it meanwhile.
            await jsm.streams.info(name).catch(() => {
              throw error;
            });
          }
        }
      }
      const registry = await new Kvm(nc).create(names.registry, { replicas: config.replicas, history: 1 });
      return { jsm, registry };
    } catch (error) {
      if (attempt % 10 === 1) log.error("cluster streams not reachable yet; retrying", { error: String(error) });
      await delay(Math.min(2_000, 100 * attempt));
    }
  }
}
