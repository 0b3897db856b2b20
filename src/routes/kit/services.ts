import type { AccountServices } from "./account-services.js";
import type { ClusterNode } from "../../cluster/cluster-node.js";
import type { CoreServices } from "./core.js";
import type { Config } from "../../config/config.js";
import type { FeatureRepository } from "../../features/feature-repository.js";
import type { FlagStateNotifier } from "../../features/flag-state-notifier.js";
import type { ManagementLog } from "../../management/management-log.js";
import type { KvStore } from "../../storage/kv.js";
import type { KeyIndex } from "../../tenancy/key-index.js";
import type { TenancyRepository } from "../../tenancy/tenancy-repository.js";
import type { TrackingReader } from "../../tracking/index.js";
import type { Executor } from "../../workers/executor.js";
import type { EvaluationCache } from "../sdk/evaluation-cache.js";
import type { LiveStreamHub } from "../../live/live-stream-hub.js";
import type { Prompting } from "../../surveys/prompting.js";
import type { ProjectionGate } from "../../tracking/projection-driver.js";

/** The object graph every route sees; built once in main.ts. */
export interface Services extends CoreServices {
  config: Config;
  store: KvStore;
  tenancy: TenancyRepository;
  features: FeatureRepository;
  keys: KeyIndex;
  flagStates: FlagStateNotifier;
  tracking: TrackingReader;
  /** Where evaluation and ingestion run: the worker pool, or inline. */
  executor: Executor;
  evaluationCache: EvaluationCache;
  /** The open live-update streams (`/sse/server`, `/sse/client`), told of every new flagStateVersion. */
  live: LiveStreamHub;
  /** Survey prompting: who is due a prompt, and the open prompt streams. */
  prompting: Prompting;
  /** What derives from the tracking log: lag admission, and reads that wait for what was acknowledged before them. */
  projection: ProjectionGate;
  /** Where every management write goes (applied here, or through the cluster's log), with its audit entry. */
  management: ManagementLog;
  /** Members, sessions, API tokens, passwords, sign-in throttling, the audit log. */
  accounts: AccountServices;
  /** Cluster mode (API.md §11): the node's NATS JetStream logs; undefined when the node runs alone. */
  cluster?: ClusterNode;
}
