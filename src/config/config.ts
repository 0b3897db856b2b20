import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import * as v from "valibot";

/** Everything the service reads from its environment, validated once and frozen. */
export interface Config {
  readonly port: number;
  /** API.md §9: when set, the management API and the dashboard listen only here; SDK traffic stays on `port`. */
  readonly adminPort: number | undefined;
  readonly host: string;
  readonly dataDir: string;
  readonly adminToken: string | undefined;
  /** Evaluation and ingestion threads; 0 runs that work on the main thread. */
  readonly workers: number;
  /** `auto`: native addons when they load, else the native-free twins. */
  readonly native: "auto" | "on" | "off";
  /** `commit`: acknowledged once committed (survives a process crash); `flush`: once on disk (survives power loss). */
  readonly durability: "commit" | "flush";
  /** Requests per second allowed per key and per client address; 0 disables the limit. */
  readonly rateLimitPerKey: number;
  readonly rateLimitPerAddress: number;
  /** Tracking writes allowed to wait for a commit before new ones get a 503. */
  readonly maxPendingWrites: number;
  readonly logLevel: "silent" | "info";
  /** How long an evaluation answer may be reused for a repeated context; 0 turns the cache off. */
  readonly evaluationCacheMs: number;
  /** Evaluation answers at least this large are compressed when the client accepts br or gzip; 0 never compresses. */
  readonly compressMinBytes: number;
  /** What derives from the tracking log (API.md §4): how far behind it may fall, and how long a read waits for it. */
  readonly projection: {
    /** Tracking calls get a retryable 503 while the oldest unprojected call is older than this. */
    readonly maxLagMs: number;
    /** A read of derived data waits this long for what was acknowledged before it, then answers a retryable 503. */
    readonly readWaitMs: number;
  };
  /** Live-update streams (API.md §5): keep-alive comment interval, and how many streams may be open. */
  readonly sse: {
    readonly keepAliveMs: number;
    /** Per environment key (an environment's publishable or its secret key). */
    readonly maxStreamsPerKey: number;
    /** Across the whole process. */
    readonly maxStreams: number;
  };
  /** Members, sessions and sign-in (API.md §8, docs/SECURITY.md). */
  readonly accounts: AccountsConfig;
  /** Cluster mode on NATS JetStream (API.md §11, docs/CLUSTER.md); undefined runs the node alone. */
  readonly cluster: ClusterConfig | undefined;
  /** Outgoing webhooks (API.md §16, docs/WEBHOOKS.md). */
  readonly webhooks: WebhooksConfig;
}

export interface WebhooksConfig {
  /** SWITCHYARD_WEBHOOK_ALLOW as written: the private hosts or CIDRs webhooks may reach (parsed by safe-post.ts). */
  readonly allow: string;
  /** How long one attempt may take (10 s by the contract; tests shorten it). */
  readonly timeoutMs: number;
  /** The retry schedule's first wait (5 s; tests shorten it to see the whole schedule). */
  readonly retryBaseMs: number;
  /** Attempts in flight at once on this node, across webhooks (one per webhook at a time: strict order). */
  readonly maxInFlight: number;
  /** SWITCHYARD_PUBLIC_URL's origin: what Slack messages link to. */
  readonly publicUrl: string | undefined;
}

export interface ClusterConfig {
  /** NATS server URLs (`nats://h1:4222`, `tls://…`); the client fails over between them. */
  readonly servers: readonly string[];
  /** This node's name: its durable consumers and its entry in the node registry carry it. */
  readonly nodeId: string;
  /** Prefix of the streams, consumers and registry bucket, so several deployments can share one NATS. */
  readonly prefix: string;
  /**
   * Data residency (SWITCHYARD_REGION): the node's region. Its streams are the region's own (`<prefix>_<region>_*`),
   * apps created through it are pinned to it, and it serves no app of another region nor (unless `servesUnpinned`)
   * any unpinned app.
   */
  readonly region: string | undefined;
  /**
   * SWITCHYARD_REGION_SERVES_UNPINNED=true (only with a region): the node also joins the unregioned streams and serves
   * the unpinned apps beside its region's (docs/CLUSTER.md, "Data residency").
   */
  readonly servesUnpinned: boolean;
  /** Copies JetStream keeps of each stream (3: a quorum survives the loss of one server). */
  readonly replicas: number;
  /** How long a publish waits for JetStream's acknowledgement before the call gets a retryable 503. */
  readonly publishTimeoutMs: number;
  /** Credentials: a `.creds` file (JWT + NKey), user and password, or a token; at most one kind. */
  readonly credsFile: string | undefined;
  readonly user: string | undefined;
  readonly password: string | undefined;
  readonly token: string | undefined;
  /** TLS: a CA bundle to trust, and a client certificate and key for mutual TLS. */
  readonly tls: { readonly caFile: string | undefined; readonly certFile: string | undefined; readonly keyFile: string | undefined } | undefined;
}

export interface AccountsConfig {
  /** The service's own origin (`https://flags.example.com`): what a cookie request's Origin must be, and whether cookies are Secure. */
  readonly publicOrigin: string | undefined;
  /** A session unused this long is over. */
  readonly sessionIdleMs: number;
  /** A session is over this long after sign-in, however busy. */
  readonly sessionAbsoluteMs: number;
  /** Failed sign-ins allowed per account, and per client address, within `signInWindowMs`; past them: 429. */
  readonly signInMaxFailuresPerAccount: number;
  readonly signInMaxFailuresPerAddress: number;
  readonly signInWindowMs: number;
  /** log2 of scrypt's N for new password hashes (stored with each hash, so a change applies to new passwords). */
  readonly passwordCost: number;
  /** How long an access token issued through OAuth (an editor's MCP sign-in) stays valid. */
  readonly oauthTokenTtlMs: number;
}

const integerFrom = (minimum: number, maximum: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, "must be a whole number"),
    v.transform(Number),
    v.number(),
    v.minValue(minimum, `must be at least ${minimum}`),
    v.maxValue(maximum, `must be at most ${maximum}`),
  );

const ENVIRONMENT_SCHEMA = v.object({
  SWITCHYARD_PORT: v.optional(integerFrom(0, 65535), "3000"),
  SWITCHYARD_ADMIN_PORT: v.optional(integerFrom(0, 65535)),
  SWITCHYARD_HOST: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty")), "0.0.0.0"),
  SWITCHYARD_DATA_DIR: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty")), "./data"),
  SWITCHYARD_ADMIN_TOKEN: v.optional(v.pipe(v.string(), v.minLength(32, "must be at least 32 characters"))),
  SWITCHYARD_WORKERS: v.optional(integerFrom(0, 256)),
  SWITCHYARD_NATIVE: v.optional(v.picklist(["auto", "1", "0", "on", "off"], "must be auto, 1 or 0"), "auto"),
  SWITCHYARD_DURABILITY: v.optional(v.picklist(["commit", "flush"], "must be commit or flush"), "commit"),
  SWITCHYARD_RATE_LIMIT_PER_KEY: v.optional(integerFrom(0, 10_000_000), "0"),
  SWITCHYARD_RATE_LIMIT_PER_ADDRESS: v.optional(integerFrom(0, 10_000_000), "0"),
  SWITCHYARD_MAX_PENDING_WRITES: v.optional(integerFrom(1, 10_000_000), "20000"),
  SWITCHYARD_LOG: v.optional(v.picklist(["silent", "info"], "must be silent or info"), "info"),
  SWITCHYARD_EVALUATION_CACHE_MS: v.optional(integerFrom(0, 60_000), "1000"),
  SWITCHYARD_COMPRESS_MIN_BYTES: v.optional(integerFrom(0, 1_000_000_000), "32768"),
  SWITCHYARD_PROJECTION_MAX_LAG_MS: v.optional(integerFrom(10, 3_600_000), "1000"),
  SWITCHYARD_READ_WAIT_MS: v.optional(integerFrom(10, 600_000), "5000"),
  // The contract's 15 s; tests shorten it. Below 100 ms the comments alone would be a load.
  SWITCHYARD_SSE_KEEPALIVE_MS: v.optional(integerFrom(100, 3_600_000), "15000"),
  SWITCHYARD_SSE_MAX_STREAMS_PER_KEY: v.optional(integerFrom(1, 1_000_000), "100"),
  SWITCHYARD_SSE_MAX_STREAMS: v.optional(integerFrom(1, 1_000_000), "10000"),
  SWITCHYARD_PUBLIC_URL: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/[^/?#\s]+\/?$/, "must be an http(s) origin such as https://flags.example.com"))),
  // Tests shorten both to see expiry without waiting hours; below 100 ms a session could not survive one request.
  SWITCHYARD_OAUTH_TOKEN_TTL_MS: v.optional(integerFrom(1000, 366 * 86_400_000), String(30 * 86_400_000)),
  SWITCHYARD_SESSION_IDLE_MS: v.optional(integerFrom(100, 31 * 86_400_000), String(2 * 3_600_000)),
  SWITCHYARD_SESSION_ABSOLUTE_MS: v.optional(integerFrom(100, 366 * 86_400_000), String(12 * 3_600_000)),
  SWITCHYARD_SIGNIN_MAX_FAILURES: v.optional(integerFrom(1, 1_000_000), "5"),
  SWITCHYARD_SIGNIN_MAX_FAILURES_PER_ADDRESS: v.optional(integerFrom(1, 1_000_000), "20"),
  SWITCHYARD_SIGNIN_WINDOW_MS: v.optional(integerFrom(1000, 86_400_000), String(15 * 60_000)),
  // 2^17 is OWASP's floor for scrypt; tests lower it to 2^14 to sign in quickly. Below that is refused.
  SWITCHYARD_PASSWORD_COST: v.optional(integerFrom(14, 20), "17"),
  SWITCHYARD_WEBHOOK_ALLOW: v.optional(v.string(), ""),
  SWITCHYARD_WEBHOOK_TIMEOUT_MS: v.optional(integerFrom(100, 60_000), "10000"),
  SWITCHYARD_WEBHOOK_RETRY_BASE_MS: v.optional(integerFrom(10, 3_600_000), "5000"),
  SWITCHYARD_WEBHOOK_CONCURRENCY: v.optional(integerFrom(1, 1000), "16"),
  SWITCHYARD_CLUSTER_URL: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^(?:(?:nats|tls):\/\/[^,\s/]+)(?:,(?:nats|tls):\/\/[^,\s/]+)*$/, "must be comma-separated nats:// or tls:// URLs such as nats://h1:4222,nats://h2:4222"),
    ),
  ),
  // Letters, digits, - and _: it becomes part of consumer names and registry keys, which allow nothing else.
  SWITCHYARD_NODE_ID: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, - or _"))),
  SWITCHYARD_CLUSTER_PREFIX: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{1,32}$/, "must be 1 to 32 letters, digits, - or _")), "SWITCHYARD"),
  SWITCHYARD_CLUSTER_REPLICAS: v.optional(integerFrom(1, 5), "3"),
  // Lower-case letters, digits and -: it becomes part of stream names (e.g. SWITCHYARD_eu_CONFIG).
  SWITCHYARD_REGION: v.optional(v.pipe(v.string(), v.regex(/^[a-z][a-z0-9-]{0,15}$/, "must be 1 to 16 lower-case letters, digits or -, starting with a letter, such as eu"))),
  SWITCHYARD_REGION_SERVES_UNPINNED: v.optional(v.picklist(["true", "false"], "must be true or false")),
  SWITCHYARD_CLUSTER_PUBLISH_TIMEOUT_MS: v.optional(integerFrom(100, 60_000), "5000"),
  SWITCHYARD_CLUSTER_CREDS: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  SWITCHYARD_CLUSTER_USER: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  SWITCHYARD_CLUSTER_PASSWORD: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  SWITCHYARD_CLUSTER_TOKEN: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  SWITCHYARD_CLUSTER_TLS_CA: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  SWITCHYARD_CLUSTER_TLS_CERT: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
  SWITCHYARD_CLUSTER_TLS_KEY: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"))),
});

type ParsedEnvironment = v.InferOutput<typeof ENVIRONMENT_SCHEMA>;

const CLUSTER_ONLY = [
  "SWITCHYARD_REGION",
  "SWITCHYARD_REGION_SERVES_UNPINNED",
  "SWITCHYARD_CLUSTER_CREDS",
  "SWITCHYARD_CLUSTER_USER",
  "SWITCHYARD_CLUSTER_PASSWORD",
  "SWITCHYARD_CLUSTER_TOKEN",
  "SWITCHYARD_CLUSTER_TLS_CA",
  "SWITCHYARD_CLUSTER_TLS_CERT",
  "SWITCHYARD_CLUSTER_TLS_KEY",
] as const;

/** The cluster settings, checked together (they depend on each other); undefined without SWITCHYARD_CLUSTER_URL. */
function clusterConfig(input: ParsedEnvironment): ClusterConfig | undefined {
  const fail = (variable: string, message: string): never => {
    throw new ConfigError(`Invalid configuration: ${variable} ${message}.`);
  };
  if (input.SWITCHYARD_CLUSTER_URL === undefined) {
    if (input.SWITCHYARD_NODE_ID !== undefined) fail("SWITCHYARD_NODE_ID", "needs SWITCHYARD_CLUSTER_URL (cluster mode)");
    for (const name of CLUSTER_ONLY) if (input[name] !== undefined) fail(name, "needs SWITCHYARD_CLUSTER_URL (cluster mode)");
    return undefined;
  }
  if (input.SWITCHYARD_NODE_ID === undefined) return fail("SWITCHYARD_NODE_ID", "is required in cluster mode (SWITCHYARD_CLUSTER_URL is set)");
  const kinds = [input.SWITCHYARD_CLUSTER_CREDS, input.SWITCHYARD_CLUSTER_USER, input.SWITCHYARD_CLUSTER_TOKEN].filter((value) => value !== undefined).length;
  if (kinds > 1) fail("SWITCHYARD_CLUSTER_CREDS", "conflicts: set one of SWITCHYARD_CLUSTER_CREDS, SWITCHYARD_CLUSTER_USER (+ _PASSWORD) or SWITCHYARD_CLUSTER_TOKEN");
  if ((input.SWITCHYARD_CLUSTER_USER === undefined) !== (input.SWITCHYARD_CLUSTER_PASSWORD === undefined)) {
    fail(input.SWITCHYARD_CLUSTER_USER === undefined ? "SWITCHYARD_CLUSTER_USER" : "SWITCHYARD_CLUSTER_PASSWORD", "must be set together with its pair (user and password)");
  }
  if ((input.SWITCHYARD_CLUSTER_TLS_CERT === undefined) !== (input.SWITCHYARD_CLUSTER_TLS_KEY === undefined)) {
    fail(input.SWITCHYARD_CLUSTER_TLS_CERT === undefined ? "SWITCHYARD_CLUSTER_TLS_CERT" : "SWITCHYARD_CLUSTER_TLS_KEY", "must be set together with its pair (certificate and key)");
  }
  // Serving unpinned apps besides a region's is what it means; a node of no region serves them already.
  if (input.SWITCHYARD_REGION_SERVES_UNPINNED !== undefined && input.SWITCHYARD_REGION === undefined) {
    fail("SWITCHYARD_REGION_SERVES_UNPINNED", "needs SWITCHYARD_REGION (a node of no region serves the unpinned apps already)");
  }
  const tls =
    input.SWITCHYARD_CLUSTER_TLS_CA !== undefined || input.SWITCHYARD_CLUSTER_TLS_CERT !== undefined
      ? Object.freeze({ caFile: input.SWITCHYARD_CLUSTER_TLS_CA, certFile: input.SWITCHYARD_CLUSTER_TLS_CERT, keyFile: input.SWITCHYARD_CLUSTER_TLS_KEY })
      : undefined;
  return Object.freeze({
    servers: Object.freeze(input.SWITCHYARD_CLUSTER_URL.split(",")),
    nodeId: input.SWITCHYARD_NODE_ID,
    prefix: input.SWITCHYARD_CLUSTER_PREFIX,
    region: input.SWITCHYARD_REGION,
    servesUnpinned: input.SWITCHYARD_REGION_SERVES_UNPINNED === "true",
    replicas: input.SWITCHYARD_CLUSTER_REPLICAS,
    publishTimeoutMs: input.SWITCHYARD_CLUSTER_PUBLISH_TIMEOUT_MS,
    credsFile: input.SWITCHYARD_CLUSTER_CREDS,
    user: input.SWITCHYARD_CLUSTER_USER,
    password: input.SWITCHYARD_CLUSTER_PASSWORD,
    token: input.SWITCHYARD_CLUSTER_TOKEN,
    tls,
  });
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Reads the configuration from environment variables; throws ConfigError naming the first bad variable. */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
  const relevant = Object.fromEntries(
    Object.entries(environment).filter(([name, value]) => name.startsWith("SWITCHYARD_") && value !== undefined && value !== ""),
  );
  const parsed = v.safeParse(ENVIRONMENT_SCHEMA, relevant);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const variable = issue.path?.map((item) => String(item.key)).join(".") ?? "environment";
    throw new ConfigError(`Invalid configuration: ${variable} ${issue.message} (got ${JSON.stringify(relevant[variable])}).`);
  }
  const input = parsed.output;
  const native = input.SWITCHYARD_NATIVE === "1" || input.SWITCHYARD_NATIVE === "on" ? "on" : input.SWITCHYARD_NATIVE === "auto" ? "auto" : "off";
  return Object.freeze({
    port: input.SWITCHYARD_PORT,
    adminPort: input.SWITCHYARD_ADMIN_PORT,
    host: input.SWITCHYARD_HOST,
    dataDir: resolve(input.SWITCHYARD_DATA_DIR),
    adminToken: input.SWITCHYARD_ADMIN_TOKEN,
    workers: input.SWITCHYARD_WORKERS ?? Math.max(1, availableParallelism() - 1),
    native,
    durability: input.SWITCHYARD_DURABILITY,
    rateLimitPerKey: input.SWITCHYARD_RATE_LIMIT_PER_KEY,
    rateLimitPerAddress: input.SWITCHYARD_RATE_LIMIT_PER_ADDRESS,
    maxPendingWrites: input.SWITCHYARD_MAX_PENDING_WRITES,
    logLevel: input.SWITCHYARD_LOG,
    evaluationCacheMs: input.SWITCHYARD_EVALUATION_CACHE_MS,
    compressMinBytes: input.SWITCHYARD_COMPRESS_MIN_BYTES,
    projection: Object.freeze({ maxLagMs: input.SWITCHYARD_PROJECTION_MAX_LAG_MS, readWaitMs: input.SWITCHYARD_READ_WAIT_MS }),
    sse: Object.freeze({
      keepAliveMs: input.SWITCHYARD_SSE_KEEPALIVE_MS,
      maxStreamsPerKey: input.SWITCHYARD_SSE_MAX_STREAMS_PER_KEY,
      maxStreams: input.SWITCHYARD_SSE_MAX_STREAMS,
    }),
    accounts: Object.freeze({
      publicOrigin: input.SWITCHYARD_PUBLIC_URL === undefined ? undefined : new URL(input.SWITCHYARD_PUBLIC_URL).origin,
      sessionIdleMs: input.SWITCHYARD_SESSION_IDLE_MS,
      sessionAbsoluteMs: input.SWITCHYARD_SESSION_ABSOLUTE_MS,
      signInMaxFailuresPerAccount: input.SWITCHYARD_SIGNIN_MAX_FAILURES,
      signInMaxFailuresPerAddress: input.SWITCHYARD_SIGNIN_MAX_FAILURES_PER_ADDRESS,
      signInWindowMs: input.SWITCHYARD_SIGNIN_WINDOW_MS,
      passwordCost: input.SWITCHYARD_PASSWORD_COST,
      oauthTokenTtlMs: input.SWITCHYARD_OAUTH_TOKEN_TTL_MS,
    }),
    cluster: clusterConfig(input),
    webhooks: Object.freeze({
      allow: input.SWITCHYARD_WEBHOOK_ALLOW,
      timeoutMs: input.SWITCHYARD_WEBHOOK_TIMEOUT_MS,
      retryBaseMs: input.SWITCHYARD_WEBHOOK_RETRY_BASE_MS,
      maxInFlight: input.SWITCHYARD_WEBHOOK_CONCURRENCY,
      publicUrl: input.SWITCHYARD_PUBLIC_URL === undefined ? undefined : new URL(input.SWITCHYARD_PUBLIC_URL).origin,
    }),
  });
}
