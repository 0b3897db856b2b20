import { residencyViolation } from "./cluster/residency.js";
import { ConfigError } from "./config/config.js";
import { createApiCore } from "./routes/core/core.js";
import { buildRouters } from "./routes/registry.js";
import { LiveStreamHub } from "./features/live-stream-hub.js";
import { createPrompting } from "./surveys/prompting.js";
import { RateLimiter } from "./routes/core/rate-limiter.js";
import type { FrontEnd } from "./http/types.js";
import { AccountRepository } from "./accounts/account-repository.js";
import { bootstrapAdminToken } from "./accounts/admin-bootstrap.js";
import { AuditLog } from "./accounts/audit-log.js";
import { Credentials } from "./routes/core/credentials.js";
import { PasswordHasher } from "./accounts/passwords.js";
import { SignInThrottle } from "./accounts/sign-in-throttle.js";
import { rewriteAdminTokenFile } from "./accounts/admin-token.js";
import type { Config } from "./config/config.js";
import { FeatureRepository } from "./features/feature-repository.js";
import { FlagStateNotifier } from "./features/flag-state-notifier.js";
import { createLogger, type Logger } from "./observability/logger.js";
import { Metrics } from "./observability/metrics.js";
import { selectAdapters } from "./composition/adapters.js";
import { EvaluationCache } from "./serving/evaluation/evaluation-cache.js";
import { EvaluationServing } from "./serving/evaluation/evaluation-serving.js";
import type { TrackingLog } from "./serving/tracking/tracking-log.js";
import { LocalTrackingLog } from "./serving/tracking/local-tracking-log.js";
import { ReplicatedTrackingLog } from "./cluster/replicated-tracking-log.js";
import { applyEverythingLogged } from "./cluster/logged-barrier.js";
import { createJobContext } from "./serving/job-context.js";
import { TRACKING_PROJECTIONS } from "./serving/tracking-projections.js";
import { AppendTally } from "./tracking/append-tally.js";
import { lastAppended, logBegun, noteDataBeforeLog, projectedUpTo } from "./tracking/tracking-log-table.js";
import { startProjection } from "./composition/start-projection.js";
import { TrackingReader } from "./tracking/index.js";
import type { Executor } from "./serving/workers/executor.js";
import { createInlineExecutor } from "./serving/workers/inline-executor.js";
import { createPoolExecutor } from "./serving/workers/pool-executor.js";
import { createSplitExecutor } from "./serving/workers/split-executor.js";
import type { Services } from "./routes/core/services.js";
import { LocalManagementLog, type ManagementLog } from "./management/management-log.js";
import { ClusterNode } from "./cluster/cluster-node.js";
import { observeAppliedChanges } from "./composition/applied-observers.js";
import { ChangeRequestScheduler } from "./composition/change-request-scheduler.js";
import { RolloutDriver } from "./composition/rollout-driver.js";
import { startWebhookDispatcher, webhookPolicy } from "./composition/webhook-dispatcher.js";
import { migrateStore } from "./storage/schema-version.js";
import type { TableName, TableValues } from "./storage/kv.js";
import { STORE_UPGRADES } from "./composition/store-upgrades.js";
import { KeyIndex } from "./tenancy/key-index.js";
import { TenancyRepository } from "./tenancy/tenancy-repository.js";

/** Every table of the store has its value type declared by the room that owns it (TableValues, storage/kv.ts). */
const EVERY_TABLE_TYPED: [Exclude<TableName, keyof TableValues>] extends [never] ? true : Exclude<TableName, keyof TableValues> = true;
void EVERY_TABLE_TYPED;

/** How often changes made by another process sharing the data dir are looked for. */
const CROSS_PROCESS_POLL_MS = 250;
/** How long a cluster node waits for NATS at start before it serves from its local store anyway. */
const CLUSTER_START_WAIT_MS = 5_000;
/** How long SIGTERM waits for in-flight requests before closing anyway. */
const DRAIN_TIMEOUT_MS = 10_000;

export interface RunningService {
  port: number;
  /** The admin port's bound port, when SWITCHYARD_ADMIN_PORT is set. */
  adminPort: number | undefined;
  frontEnd: FrontEnd["kind"];
  store: Services["store"]["kind"];
  /** Drains in-flight requests, commits pending writes and closes everything. */
  stop(): Promise<void>;
}

/**
 * Repeated contexts (a browser polling for its user) are answered from memory for SWITCHYARD_EVALUATION_CACHE_MS,
 * which bounds how long a change made by another process sharing the data dir, or a date operator's boundary, goes
 * unseen; see evaluation-cache.ts.
 */
const EVALUATION_CACHE = { maxEntries: 10_000, maxAnswerBytes: 64 * 1024 };

/** Most jobs per worker task: what arrives together is spread over the threads, so no one worker gets everything. */
const MAX_BATCH = 32;

function createExecutor(config: Config, storeShared: boolean, store: Services["store"], tally: AppendTally, log: Logger, metrics: Metrics): Executor {
  const onFault = (error: unknown) => log.error("job failed", { error: String((error as Error)?.stack ?? error) });
  // The native-free store lives in this process: workers could not see it, so its jobs run inline.
  const inline = createInlineExecutor(createJobContext(store, tally), config.maxPendingWrites, onFault, metrics.tracking);
  if (config.workers === 0 || !storeShared) return inline;
  const pool = createPoolExecutor({
    threads: config.workers,
    setup: { dataDir: config.dataDir, durability: config.durability, appendTally: tally.shared },
    maxPending: config.maxPendingWrites,
    maxBatch: MAX_BATCH,
    stats: metrics.tracking,
  });
  return createSplitExecutor(pool, inline);
}

/** The composition root: config → store → services → API core → front end. */
export async function startService(config: Config, log: Logger = createLogger(config.logLevel)): Promise<RunningService> {
  const outgoing = webhookPolicy(config);
  const adapters = await selectAdapters(config, log);
  const { store } = adapters;
  await migrateStore(store, STORE_UPGRADES);
  if (!logBegun(store)) await store.write(() => noteDataBeforeLog(store));

  const accountRepository = new AccountRepository(store);
  const bootstrapAdminDigest = bootstrapAdminToken(config, accountRepository, log);

  const tenancy = new TenancyRepository(store);
  const misplaced = residencyViolation(tenancy.listApps(), config.cluster?.region, config.cluster?.servesUnpinned);
  if (misplaced !== undefined) {
    await store.close();
    throw new ConfigError(misplaced);
  }
  const keys = new KeyIndex(tenancy);
  const flagStates = new FlagStateNotifier(() =>
    tenancy.listEnvironments().map((environment) => [environment.id, environment.flagStateVersion] as [string, number]),
  );
  const metrics = new Metrics();
  const appendTally = new AppendTally();
  const executor = createExecutor(config, adapters.storeSharedAcrossThreads, store, appendTally, log, metrics);
  metrics.gauge("switchyard_queue_depth", "Jobs (evaluations, tracking) accepted and not yet answered.", () => executor.pending());
  metrics.gauge("switchyard_pool_utilization", "Share of the worker pool's capacity in use (0 when jobs run inline).", () => executor.utilization?.() ?? 0);
  const evaluationCache = new EvaluationCache({ ...EVALUATION_CACHE, ttlMs: config.evaluationCacheMs });
  // Cluster mode: management changes and tracking go through NATS JetStream, applied here from the logs.
  const cluster =
    config.cluster === undefined
      ? undefined
      : ClusterNode.start(config.cluster, store, log, metrics, TRACKING_PROJECTIONS, (environments) => {
          for (const environmentId of environments) evaluationCache.attributesChanged(environmentId);
        });
  // Normally NATS answers at once and the node listens with its streams ready; if it does not, serve anyway.
  await cluster?.readyWithin(CLUSTER_START_WAIT_MS);
  // What a crash left unprojected (the crash tool reads it from the "listening" line).
  const projectionAtStart = cluster === undefined ? { projected: projectedUpTo(store), appended: lastAppended(store) } : undefined;
  const projection = startProjection({
    config,
    store,
    executor,
    tally: appendTally,
    projections: TRACKING_PROJECTIONS,
    cluster,
    attributesChanged: (environmentId) => evaluationCache.attributesChanged(environmentId),
    metrics,
    log,
  });
  // Tracking goes to this node's append log, or in cluster mode to the replicated one: routes hold only the port.
  const trackingLog: TrackingLog = cluster !== undefined ? new ReplicatedTrackingLog(cluster, store) : new LocalTrackingLog(executor, projection.gate);
  const evaluation = new EvaluationServing({ runner: executor, trackingLog, cache: evaluationCache, flagStates, config, attributeWrites: projection.gate.attributeWrites });
  const management: ManagementLog = cluster?.management ?? new LocalManagementLog(store);
  const credentials = new Credentials({ accounts: accountRepository, keys, management, config: config.accounts, bootstrapAdminDigest, log });
  observeAppliedChanges(management, { flagStates, keys, credentials });
  const scheduler = new ChangeRequestScheduler(store, management, log);
  const rolloutDriver = new RolloutDriver(store, management, log);
  const webhookDispatcher = startWebhookDispatcher(config, outgoing, store, management, log);
  const { accounts: accountsConfig } = config;
  let draining = false;
  const services: Services = {
    config,
    store,
    tenancy,
    features: new FeatureRepository(store),
    keys,
    flagStates,
    tracking: new TrackingReader(store),
    executor,
    evaluation,
    trackingLog,
    live: new LiveStreamHub(flagStates, config.sse),
    prompting: createPrompting(store, { keepAliveMs: config.sse.keepAliveMs, maxStreams: config.sse.maxStreams }, log),
    projection: projection.gate,
    log,
    metrics,
    management,
    accounts: {
      repository: accountRepository,
      audit: new AuditLog(store),
      credentials,
      passwords: new PasswordHasher(accountsConfig.passwordCost),
      throttle: new SignInThrottle({
        maxFailuresPerAccount: accountsConfig.signInMaxFailuresPerAccount,
        maxFailuresPerAddress: accountsConfig.signInMaxFailuresPerAddress,
        windowMs: accountsConfig.signInWindowMs,
      }),
      rewriteAdminTokenFile: (token) => rewriteAdminTokenFile(config.dataDir, token),
    },
    auth: { keys, management: credentials },
    rateLimits: { perKey: new RateLimiter(config.rateLimitPerKey), perAddress: new RateLimiter(config.rateLimitPerAddress) },
    isDraining: () => draining,
    ...(cluster !== undefined
      ? {
          cluster: {
            nodeId: cluster.config.nodeId,
            status: () => cluster.status(),
            clusterStatus: () => cluster.clusterStatus(),
            applyEverythingLogged: () => applyEverythingLogged(cluster),
          },
        }
      : {}),
  };

  let boundPort: number | undefined;
  const routers = buildRouters(config.adminPort !== undefined, () => boundPort);
  const limits = { maxUrlLength: 32 * 1024, idleTimeoutSeconds: 10 };
  const frontEnd = adapters.createFrontEnd(createApiCore(services, routers.sdk), limits);
  const adminFrontEnd = config.adminPort === undefined ? undefined : adapters.createFrontEnd(createApiCore(services, routers.admin), limits);
  const adminPort = adminFrontEnd ? await adminFrontEnd.listen(config.host, config.adminPort!) : undefined;
  const port = await frontEnd.listen(config.host, config.port);
  boundPort = port;
  const frontEnds = adminFrontEnd ? [frontEnd, adminFrontEnd] : [frontEnd];

  const crossProcessPoll = setInterval(() => {
    store.refresh();
    flagStates.poll();
    keys.reload();
    credentials.reloadAdminToken();
  }, CROSS_PROCESS_POLL_MS);
  crossProcessPoll.unref();

  log.info("listening", {
    host: config.host,
    port,
    ...(adminPort !== undefined ? { adminPort } : {}),
    frontEnd: frontEnd.kind,
    store: store.kind,
    executor: executor.kind,
    workers: config.workers,
    ...(projectionAtStart !== undefined ? { trackingLog: projectionAtStart } : {}),
    ...(config.cluster !== undefined ? { cluster: config.cluster.nodeId } : {}),
  });

  let stopping: Promise<void> | undefined;
  return {
    port,
    adminPort,
    frontEnd: frontEnd.kind,
    store: store.kind,
    stop() {
      stopping ??= (async () => {
        draining = true;
        for (const each of frontEnds) each.stopListening();
        const deadline = Date.now() + DRAIN_TIMEOUT_MS;
        const inFlight = () => frontEnds.reduce((sum, each) => sum + each.inFlight(), 0);
        // Jobs outlive requests whose clients hung up, and feature events answered before their commit (held a few
        // milliseconds in the workers) outlive their jobs: wait for all of them before the pool goes.
        const busy = () => inFlight() > 0 || executor.pending() > 0 || appendTally.inFlight();
        while (busy() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        clearInterval(crossProcessPoll);
        scheduler.stop();
        rolloutDriver.stop();
        await webhookDispatcher.stop();
        for (const each of frontEnds) each.closeAll();
        // What was acknowledged is in the log either way; projecting it now spares the next start the backlog.
        await projection.stop(deadline);
        await executor.close();
        await cluster?.stop();
        await store.close();
        log.info("stopped", { port });
      })();
      return stopping;
    },
  };
}
