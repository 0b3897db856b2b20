import { residencyViolation } from "./cluster/residency.js";
import { ConfigError } from "./config/config.js";
import { createApiCore } from "./api/core.js";
import { RateLimiter } from "./api/rate-limiter.js";
import { HEALTH_ROUTES } from "./api/health-routes.js";
import type { RouteSpec } from "./api/route.js";
import { Router, type HttpMethod } from "./api/router.js";
import { createDashboardRoutes } from "./web/dashboard-routes.js";
import { CLI_BROWSER_ROUTES } from "./web/cli-browser-routes.js";
import type { FrontEnd } from "./api/types.js";
import { addAdminRoutes } from "./admin/admin-routes.js";
import { AccountRepository } from "./accounts/account-repository.js";
import { bootstrapAdminToken } from "./accounts/admin-bootstrap.js";
import { AuditLog } from "./accounts/audit-log.js";
import { Credentials } from "./accounts/credentials.js";
import { PasswordHasher } from "./accounts/passwords.js";
import { SignInThrottle } from "./accounts/sign-in-throttle.js";
import { rewriteAdminTokenFile } from "./config/admin-token.js";
import type { Config } from "./config/config.js";
import { FeatureRepository } from "./features/feature-repository.js";
import { FlagStateNotifier } from "./features/flag-state-notifier.js";
import { createLiveRoutes } from "./live/live-routes.js";
import { MCP_ROUTES } from "./mcp/mcp-routes.js";
import { createLogger, type Logger } from "./observability/logger.js";
import { Metrics } from "./observability/metrics.js";
import { METRICS_ROUTES } from "./observability/metrics-route.js";
import { OPT_IN_ROUTES } from "./optin/opt-in-route.js";
import { selectAdapters } from "./runtime/adapters.js";
import { EvaluationCache } from "./serving/evaluation-cache.js";
import { EVALUATION_ROUTES } from "./serving/evaluation-routes.js";
import { PROMPTING_ROUTES } from "./surveys/prompting-routes.js";
import { createRulesRoutes } from "./serving/rules-route.js";
import { TRACKING_ROUTES } from "./serving/tracking-routes.js";
import { createJobContext } from "./jobs/job-context.js";
import { TrackingReader } from "./tracking/index.js";
import { createInlineExecutor, createPoolExecutor, createSplitExecutor, type Executor } from "./workers/executor.js";
import type { Services } from "./services.js";
import { LocalManagementLog, type ManagementLog } from "./management/management-log.js";
import { ClusterNode } from "./cluster/cluster-node.js";
import { observeAppliedChanges } from "./management/observers.js";
import { migrateStore } from "./storage/schema-version.js";
import { KeyIndex } from "./tenancy/key-index.js";
import { TenancyRepository } from "./tenancy/tenancy-repository.js";

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
 * The routers of the SDK port and of the admin port (API.md §9): with SWITCHYARD_ADMIN_PORT set, the management
 * API and the dashboard are added only to the admin port's router and the rest only to the SDK port's (`/health`
 * to both); without it, one router has everything. Routes go where their path prefix says, so a route added later
 * lands on the right port without a second list.
 */
export function buildRouters(splitAdmin: boolean, sdkPort: () => number | undefined): { sdk: Router<RouteSpec<Services>>; admin: Router<RouteSpec<Services>> } {
  const sdk = new Router<RouteSpec<Services>>();
  const admin = splitAdmin ? new Router<RouteSpec<Services>>() : sdk;
  const add = (method: HttpMethod, pattern: string, spec: RouteSpec<Services>) => (isAdminSurface(pattern) ? admin : sdk).add(method, pattern, spec);
  for (const [method, pattern, spec] of HEALTH_ROUTES) {
    sdk.add(method, pattern, spec as RouteSpec<Services>);
    if (splitAdmin) admin.add(method, pattern, spec as RouteSpec<Services>);
  }
  for (const [method, pattern, spec] of METRICS_ROUTES) add(method, pattern, spec);
  addAdminRoutes({ add });
  for (const [method, pattern, spec] of MCP_ROUTES) add(method, pattern, spec);
  for (const [method, pattern, spec] of createDashboardRoutes({ sdkPort: () => (splitAdmin ? sdkPort() : undefined) })) add(method, pattern, spec as RouteSpec<Services>);
  for (const [method, pattern, spec] of CLI_BROWSER_ROUTES) add(method, pattern, spec);
  const frontFacing = [...createRulesRoutes(), ...EVALUATION_ROUTES, ...TRACKING_ROUTES, ...createLiveRoutes(), ...OPT_IN_ROUTES, ...PROMPTING_ROUTES];
  for (const [method, pattern, spec] of frontFacing) add(method, pattern, spec);
  return { sdk, admin };
}

/**
 * Paths of the admin surface (API.md §9): the management APIs (MCP included, with its OAuth metadata under
 * `/.well-known`), metrics, the dashboard and the `/` that leads to it, and the CLI's browser ends (§10).
 */
export function isAdminSurface(pattern: string): boolean {
  return pattern === "/" || /^\/(admin|api|metrics|dashboard|cli-login|envs|\.well-known)(\/|$)/.test(pattern);
}

/**
 * Repeated contexts (a browser polling for its user) are answered from memory for SWITCHYARD_EVALUATION_CACHE_MS,
 * which bounds how long a change made by another process sharing the data dir, or a date operator's boundary, goes
 * unseen; see evaluation-cache.ts.
 */
const EVALUATION_CACHE = { maxEntries: 10_000, maxAnswerBytes: 64 * 1024 };

/** Most jobs per worker task: what arrives together is spread over the threads, so no one worker gets everything. */
const MAX_BATCH = 32;

function createExecutor(config: Config, storeShared: boolean, store: Services["store"], log: Logger, metrics: Metrics): Executor {
  const onFault = (error: unknown) => log.error("job failed", { error: String((error as Error)?.stack ?? error) });
  // The native-free store lives in this process: workers could not see it, so its jobs run inline.
  const inline = createInlineExecutor(createJobContext(store), config.maxPendingWrites, onFault, metrics.tracking);
  if (config.workers === 0 || !storeShared) return inline;
  const pool = createPoolExecutor({
    threads: config.workers,
    setup: { dataDir: config.dataDir, durability: config.durability },
    maxPending: config.maxPendingWrites,
    maxBatch: MAX_BATCH,
    stats: metrics.tracking,
  });
  return createSplitExecutor(pool, inline);
}

/** The composition root: config → store → services → API core → front end. */
export async function startService(config: Config, log: Logger = createLogger(config.logLevel)): Promise<RunningService> {
  const adapters = await selectAdapters(config, log);
  const { store } = adapters;
  await migrateStore(store);

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
  const executor = createExecutor(config, adapters.storeSharedAcrossThreads, store, log, metrics);
  metrics.gauge("switchyard_queue_depth", "Jobs (evaluations, tracking) accepted and not yet answered.", () => executor.pending());
  metrics.gauge("switchyard_pool_utilization", "Share of the worker pool's capacity in use (0 when jobs run inline).", () => executor.utilization?.() ?? 0);
  const evaluationCache = new EvaluationCache({ ...EVALUATION_CACHE, ttlMs: config.evaluationCacheMs });
  // Cluster mode: management changes and tracking go through NATS JetStream, applied here from the logs.
  const cluster =
    config.cluster === undefined
      ? undefined
      : ClusterNode.start(config.cluster, store, log, metrics, (environments) => {
          for (const environmentId of environments) evaluationCache.attributesChanged(environmentId);
        });
  // Normally NATS answers at once and the node listens with its streams ready; if it does not, serve anyway.
  await cluster?.readyWithin(CLUSTER_START_WAIT_MS);
  const management: ManagementLog = cluster?.management ?? new LocalManagementLog(store);
  const credentials = new Credentials({ accounts: accountRepository, keys, management, config: config.accounts, bootstrapAdminDigest, log });
  observeAppliedChanges(management, { flagStates, keys, credentials });
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
    evaluationCache,
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
    ...(cluster !== undefined ? { cluster } : {}),
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
        // Jobs outlive requests whose clients hung up: wait for both before the pool goes.
        while ((inFlight() > 0 || executor.pending() > 0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        clearInterval(crossProcessPoll);
        for (const each of frontEnds) each.closeAll();
        await executor.close();
        await cluster?.stop();
        await store.close();
        log.info("stopped", { port });
      })();
      return stopping;
    },
  };
}
