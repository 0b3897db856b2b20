import type { AccountServices } from "./account-services.js";
import type { CoreServices } from "./core.js";
import type { Config } from "../../config/config.js";
import type { FeatureRepository } from "../../features/feature-repository.js";
import type { FlagStateNotifier } from "../../features/flag-state-notifier.js";
import type { ManagementLog } from "../../management/management-log.js";
import type { KvStore } from "../../storage/kv.js";
import type { KeyIndex } from "../../tenancy/key-index.js";
import type { TenancyRepository } from "../../tenancy/tenancy-repository.js";
import type { TrackingReader } from "../../tracking/index.js";
import type { Executor } from "../../serving/workers/executor.js";
import type { EvaluationServing } from "../../serving/evaluation/evaluation-serving.js";
import type { TrackingLog } from "../../serving/tracking/tracking-log.js";
import type { LiveStreamHub } from "../../features/live-stream-hub.js";
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
  /** `/features/evaluated` and `/features/enabled`: the answer cache, the job and where it runs. */
  evaluation: EvaluationServing;
  /** Where tracking calls are logged: this node's append log, or the cluster's replicated log. */
  trackingLog: TrackingLog;
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
  /** Cluster mode (API.md §11): this node's membership; undefined when the node runs alone. */
  cluster?: ClusterMembership;
}

/** What routes ask of a cluster node (API.md §11); the composition adapts the node to it. */
export interface ClusterMembership {
  readonly nodeId: string;
  /** This node's positions, and whether it is connected and caught up (`GET /health`). */
  status(): { caughtUp: boolean };
  /** Every node's last report with its lags (`GET /admin/cluster`). */
  clusterStatus(): Promise<object>;
  /** Applies everything the cluster's logs held when called, or throws a retryable CLUSTER_UNAVAILABLE (a backup's barrier). */
  applyEverythingLogged(): Promise<void>;
}
