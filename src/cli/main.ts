#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { commandCredential, readCliEnvironment } from "./environment.js";
import { ConfigError, loadConfig } from "../config/config.js";
import { startService } from "../main.js";
import { AdminClient } from "./admin-client.js";
import { adminTokenCommand, audit, members, tokens } from "./account-commands.js";
import { featureStage, segments, stages } from "./release-commands.js";
import { resetAdminTokenOffline } from "./admin-token-reset.js";
import { readPassword } from "./password-input.js";
import { createTokenAsMember } from "./session-token.js";
import { SURVEY_USAGE, surveys } from "./survey-commands.js";
import { WEBHOOK_OPTIONS, WEBHOOK_USAGE, webhooks } from "./webhook-commands.js";
import { isOperationsCommand, OPERATIONS_USAGE, runOperationsCommand } from "./operations-commands.js";
import {
  companyTable,
  featureCompaniesTable,
  featuresTable,
  type FeatureCompaniesAnswer,
} from "../analytics/cli-tables.js";

const USAGE = `switchyard — feature access and usage tracking

  switchyard serve [--native-free]                 run the service (configured by SWITCHYARD_* variables)

Management (talks to a running service; --url defaults to http://127.0.0.1:$SWITCHYARD_PORT; the credential is
--token, else SWITCHYARD_TOKEN (a personal API token, sya_…), else SWITCHYARD_ADMIN_TOKEN, else the admin token in
$SWITCHYARD_DATA_DIR/admin-token):
  switchyard apps list | apps create NAME | apps show APP_ID
  switchyard envs create APP_ID NAME
  switchyard keys rotate ENV_ID publishable|secret
  switchyard features list APP_ID
  switchyard features put APP_ID KEY [--name NAME] [--description T] [--link URL] [--stage S] [--opt-in true|false] [--usage-events a,b]
  switchyard features archive APP_ID KEY
  switchyard features stage APP_ID KEY STAGE       (STAGE: an id or a name; writes its targeting in every environment)
  switchyard stages list APP_ID
  switchyard stages create APP_ID NAME [--order N] [--targeting FILE.json]
                                                   (FILE holds {"<envId>": {"rules": [...]}, ...})
  switchyard stages update APP_ID STAGE [--name N] [--order N] [--targeting FILE.json] [--reapply]
                                                   (--reapply: write the rules to every feature in the stage)
  switchyard stages delete APP_ID STAGE
  switchyard segments list APP_ID | segments show APP_ID SEGMENT
  switchyard segments create APP_ID NAME --filter FILE.json [--description T]
                                                   (FILE holds a filter over company.* fields; {"type": "segment",
                                                   "segmentId": ID} names another segment)
  switchyard segments update APP_ID SEGMENT [--name N] [--filter FILE.json] [--description T]
                                                   (a new filter writes new targeting versions of the features using it)
  switchyard segments delete APP_ID SEGMENT
  switchyard segments companies ENV_ID SEGMENT [--after COMPANY_ID] [--limit N]
                                                   (member companies; every page unless --after or --limit)
  switchyard features show ENV_ID KEY
  switchyard targeting set ENV_ID KEY FILE.json    (FILE holds {"rules": [...]})
  switchyard config set ENV_ID KEY FILE.json       (FILE holds {"variants": [...]})
  switchyard history ENV_ID KEY
  switchyard users show ENV_ID USER_ID | companies show ENV_ID COMPANY_ID
  switchyard events|feature-events|feedback|prompt-events ENV_ID [--after CURSOR] [--limit N]

Members, tokens, audit (docs/SECURITY.md; passwords are read from stdin when piped, else asked for without echo):
  switchyard members list
  switchyard members add EMAIL --role owner|editor|viewer [--name NAME]
  switchyard members update MEMBER [--role R] [--name N] [--password]      (MEMBER: an id or an email)
  switchyard members remove MEMBER
  switchyard members reset-password MEMBER         (prints a one-time reset link, valid 24 h)
  switchyard password-reset TOKEN                  (sets a new password with a reset link's token)
  switchyard tokens list | tokens create NAME [--read-only] | tokens revoke TOKEN_ID
  switchyard tokens create NAME --email EMAIL [--read-only]
                                                   (signs in as EMAIL to create that member's token; no credential)
  switchyard audit [--entity KIND] [--actor MEMBER_ID|admin] [--after CURSOR] [--limit N]
  switchyard cluster status [--json]               (cluster mode: each node's position in both logs and its lag)
  switchyard admin-token status | rotate | disable
  switchyard admin-token reset                     (offline, on this machine's data dir: a new admin token)

Analytics (docs/ANALYTICS.md; --from/--to are ISO 8601 dates, default the 30 days up to today; --json prints the
answer as JSON instead of a table):
  switchyard analytics features ENV_ID [--from D] [--to D]
  switchyard analytics feature ENV_ID KEY [--from D] [--to D] [--after COMPANY_ID] [--limit N]
                                                   (every company; one page when --after or --limit is given)
  switchyard analytics company ENV_ID COMPANY_ID [--from D] [--to D]
  switchyard analytics settings ENV_ID [--retention-days N]
  switchyard analytics rebuild ENV_ID

${SURVEY_USAGE}
${WEBHOOK_USAGE}
${OPERATIONS_USAGE}`;

/** Read once: the commands' environment (config/cli-environment.ts). */
const CLI_ENVIRONMENT = readCliEnvironment();

async function serve(nativeFree: boolean): Promise<void> {
  // A closed stdout (a pipe to `head`, a log collector that went away) must not take the service down.
  process.stdout.on("error", () => {});
  const config = loadConfig(nativeFree ? { ...CLI_ENVIRONMENT.service, SWITCHYARD_NATIVE: "0" } : CLI_ENVIRONMENT.service);
  const service = await startService(config);
  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    process.stdout.write(`${JSON.stringify({ time: new Date().toISOString(), level: "info", message: "draining", signal })}\n`);
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

const segment = (value: string | undefined, name: string): string => {
  if (!value) throw new Error(`Missing ${name}.\n\n${USAGE}`);
  return encodeURIComponent(value);
};

/** A command's answer already rendered for people; printed as is instead of as JSON. */
class TextOutput {
  constructor(readonly text: string) {}
}

type Values = Record<string, string | boolean | undefined>;

/** `switchyard analytics …`: tables of the analytics endpoints. */
async function analytics(client: AdminClient, action: string | undefined, first: string | undefined, second: string | undefined, values: Values): Promise<unknown> {
  const base = `/admin/environments/${segment(first, "ENV_ID")}/analytics`;
  const query = new URLSearchParams();
  if (values.from) query.set("from", String(values.from));
  if (values.to) query.set("to", String(values.to));
  const withQuery = (path: string, extra: URLSearchParams = query) => (extra.size > 0 ? `${path}?${extra}` : path);
  const output = <A>(answer: Record<string, unknown>, render: (answer: A) => string): unknown =>
    values.json ? answer : new TextOutput(render(answer as unknown as A));
  switch (action) {
    case "features":
      return output(await client.call("GET", withQuery(`${base}/features`)), featuresTable);
    case "feature": {
      const path = `${base}/features/${segment(second, "KEY")}/companies`;
      if (values.after !== undefined || values.limit !== undefined) {
        const page = new URLSearchParams(query);
        if (values.after) page.set("after", String(values.after));
        if (values.limit) page.set("limit", String(values.limit));
        return output(await client.call("GET", withQuery(path, page)), featureCompaniesTable);
      }
      // Every company: follow `next` to the end, every page over the first page's window (midnight may pass).
      let answer: FeatureCompaniesAnswer | undefined;
      for (let after: string | null = null; ; ) {
        const page = new URLSearchParams(query);
        page.set("limit", "1000");
        if (after !== null) page.set("after", after);
        const next = (await client.call("GET", withQuery(path, page))) as unknown as FeatureCompaniesAnswer;
        if (answer) answer.companies.push(...next.companies);
        else {
          answer = next;
          query.set("from", next.from);
          query.set("to", next.to);
        }
        if (next.next === null) break;
        after = next.next;
      }
      return output({ ...answer, next: null }, featureCompaniesTable);
    }
    case "company":
      return output(await client.call("GET", withQuery(`${base}/companies/${segment(second, "COMPANY_ID")}`)), companyTable);
    case "settings":
      if (values["retention-days"] === undefined) return client.call("GET", `${base}/settings`);
      return client.call("PUT", `${base}/settings`, { retentionDays: Number(values["retention-days"]) });
    case "rebuild":
      return client.call("POST", `${base}/rebuild`);
    default:
      throw new Error(USAGE);
  }
}

/**
 * `switchyard cluster status`: each node's position in both logs and its lag, as a table (or JSON with --json); on a
 * region's node that also serves the unpinned apps, a second table for the unregioned streams.
 */
async function clusterStatus(client: AdminClient, json: boolean): Promise<unknown> {
  const answer = (await client.call("GET", "/admin/cluster")) as { cluster: null | (ClusterSetView & { self: string; unpinned?: ClusterSetView }) };
  if (json || answer.cluster === null) return answer;
  const table = (set: ClusterSetView) => {
    const rows = set.nodes.map((node) =>
      [node.region === undefined ? node.nodeId : `${node.nodeId} (${node.region})`, node.connected ? "yes" : "no", node.caughtUp ? "yes" : "no", `${node.config.applied}/${set.streams.config}`, String(node.config.lag), `${node.tracking.applied}/${set.streams.tracking}`, String(node.tracking.lag), String((node.tracking.divergences ?? 0) + (node.config.divergences ?? 0)), node.at].join("\t"),
    );
    return `${["node", "connected", "caught up", "config", "config lag", "tracking", "tracking lag", "diverged", "reported"].join("\t")}\n${rows.join("\n")}\n`;
  };
  const unpinned = answer.cluster.unpinned === undefined ? "" : `\nunregioned streams (unpinned apps):\n${table(answer.cluster.unpinned)}`;
  return new TextOutput(table(answer.cluster) + unpinned);
}

interface ClusterSetView {
  streams: { config: number; tracking: number };
  nodes: ClusterNodeRow[];
}

interface ClusterNodeRow {
  nodeId: string;
  region?: string;
  connected: boolean;
  caughtUp: boolean;
  /** `divergences`: absent in reports of nodes older than the check. */
  config: { applied: number; lag: number; divergences?: number };
  tracking: { applied: number; lag: number; divergences?: number };
  at: string;
}

async function manage(positionals: string[], values: Values): Promise<unknown> {
  const url = String(values.url ?? CLI_ENVIRONMENT.serviceUrl);
  const [area, action, first, second, third] = positionals;
  // These two need no credential: one sets a password with a reset token, the other works on the data dir itself.
  if (area === "password-reset") {
    if (!action) throw new Error(`Missing TOKEN.\n\n${USAGE}`);
    return new AdminClient(url, undefined).call("POST", "/admin/password-reset", { token: action, password: await readPassword("New password") });
  }
  if (area === "admin-token" && action === "reset") return { token: await resetAdminTokenOffline(loadConfig(CLI_ENVIRONMENT.service)) };
  if (area === "tokens" && action === "create" && typeof values.email === "string") {
    if (!first) throw new Error(`Missing NAME.\n\n${USAGE}`);
    return createTokenAsMember(url, values.email, first, values["read-only"] === true);
  }
  const client = new AdminClient(url, commandCredential(values.token as string | undefined, CLI_ENVIRONMENT));
  if (area === "members") return members(client, action, first, values);
  if (area === "tokens") return tokens(client, action, first, values);
  if (area === "audit") return audit(client, values);
  if (area === "admin-token") return adminTokenCommand(client, action);
  const page = () => {
    const query = new URLSearchParams();
    if (values.after) query.set("after", String(values.after));
    if (values.limit) query.set("limit", String(values.limit));
    return query.size > 0 ? `?${query}` : "";
  };
  if (area === "analytics") return analytics(client, action, first, second, values);
  if (area === "stages") return stages(client, action, first, second, values);
  if (area === "segments") return segments(client, action, first, second, values);
  if (area === "features" && action === "stage") return featureStage(client, first, second, third);
  if (area === "surveys") return surveys(client, action, first, second, values);
  if (area === "webhooks") return webhooks(client, action, first, second, third, values);
  if (area === "cluster" && action === "status") return clusterStatus(client, values.json === true);
  // `history ENV_ID KEY` has no verb.
  if (area === "history") {
    return client.call("GET", `/admin/environments/${segment(action, "ENV_ID")}/features/${segment(first, "KEY")}/history`);
  }
  switch (`${area} ${action ?? ""}`.trim()) {
    case "apps list":
      return client.call("GET", "/admin/apps");
    case "apps create":
      return client.call("POST", "/admin/apps", { name: first });
    case "apps show":
      return client.call("GET", `/admin/apps/${segment(first, "APP_ID")}`);
    case "envs create":
      return client.call("POST", `/admin/apps/${segment(first, "APP_ID")}/environments`, { name: second });
    case "keys rotate":
      return client.call("POST", `/admin/environments/${segment(first, "ENV_ID")}/keys/rotate`, { kind: second });
    case "features list":
      return client.call("GET", `/admin/apps/${segment(first, "APP_ID")}/features`);
    case "features put": {
      const body: Record<string, unknown> = {};
      if (values.name !== undefined) body.name = values.name === "" ? null : values.name;
      if (values.description !== undefined) body.description = values.description;
      if (values.link !== undefined) body.link = values.link;
      if (values.stage !== undefined) body.stage = values.stage;
      if (values["opt-in"] !== undefined) body.optInEnabled = values["opt-in"] === "true";
      if (values["usage-events"] !== undefined) body.usageEvents = String(values["usage-events"]).split(",").filter(Boolean);
      return client.call("PUT", `/admin/apps/${segment(first, "APP_ID")}/features/${segment(second, "KEY")}`, body);
    }
    case "features archive":
      return client.call("DELETE", `/admin/apps/${segment(first, "APP_ID")}/features/${segment(second, "KEY")}`);
    case "features show":
      return client.call("GET", `/admin/environments/${segment(first, "ENV_ID")}/features/${segment(second, "KEY")}`);
    case "targeting set":
    case "config set": {
      const file = third;
      if (!file) throw new Error(`Missing FILE.json.\n\n${USAGE}`);
      const body = JSON.parse(readFileSync(file, "utf8")) as unknown;
      return client.call("PUT", `/admin/environments/${segment(first, "ENV_ID")}/features/${segment(second, "KEY")}/${area}`, body);
    }
    case "users show":
      return client.call("GET", `/admin/environments/${segment(first, "ENV_ID")}/users/${segment(second, "USER_ID")}`);
    case "companies show":
      return client.call("GET", `/admin/environments/${segment(first, "ENV_ID")}/companies/${segment(second, "COMPANY_ID")}`);
    default:
      if (["events", "feature-events", "feedback", "prompt-events"].includes(area ?? "")) {
        return client.call("GET", `/admin/environments/${segment(action, "ENV_ID")}/${area}${page()}`);
      }
      throw new Error(USAGE);
  }
}

async function run(): Promise<void> {
  if (isOperationsCommand(process.argv.slice(2))) return runOperationsCommand(process.argv.slice(2), CLI_ENVIRONMENT);
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      "native-free": { type: "boolean" },
      url: { type: "string" },
      token: { type: "string" },
      description: { type: "string" },
      link: { type: "string" },
      stage: { type: "string" },
      "opt-in": { type: "string" },
      "usage-events": { type: "string" },
      after: { type: "string" },
      limit: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
      json: { type: "boolean" },
      "retention-days": { type: "string" },
      order: { type: "string" },
      targeting: { type: "string" },
      reapply: { type: "boolean" },
      question: { type: "string" },
      "after-uses": { type: "string" },
      "after-days": { type: "string" },
      "quiet-days": { type: "string" },
      enabled: { type: "string" },
      filter: { type: "string" },
      role: { type: "string" },
      name: { type: "string" },
      password: { type: "boolean" },
      "read-only": { type: "boolean" },
      entity: { type: "string" },
      email: { type: "string" },
      actor: { type: "string" },
      help: { type: "boolean", short: "h" },
      ...WEBHOOK_OPTIONS,
    },
  });
  if (values.help || positionals.length === 0) {
    process.stdout.write(USAGE);
    return;
  }
  if (positionals[0] === "serve") return serve(values["native-free"] === true);
  const result = await manage(positionals, values);
  process.stdout.write(result instanceof TextOutput ? result.text : `${JSON.stringify(result, null, 2)}\n`);
}

run().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : (error as Error).message ?? String(error)}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
