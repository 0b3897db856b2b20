/**
 * Kill -9 under mixed load — evaluation, `/features/enabled` (answered before its evaluate events are committed: a
 * crash may lose those of the last append, which is counted, not failed),
 * tracking (events, users, companies, bulks, feature-event batches) and feedback (created, then updated by id) —
 * restart, repeat; then read everything back through the admin API and count, per kind, what was acknowledged, lost
 * (acknowledged but not stored: must be 0), partial (a multi-item write stored in part: must be 0) and stored without
 * an acknowledgement (allowed: the kill fell between commit and answer). Each restart notes how far the projection
 * was behind the tracking log; at the end the data dir's projected state must equal a rebuild from the log
 * (`switchyard projections verify`).
 * `tools/crash/mixed.ts` runs it from the command line; test/hardening/crash-mixed.test.ts runs a few cycles.
 */
import { spawnSync } from "node:child_process";
import { ADMIN_TOKEN, killUnderLoad, start, type Running } from "../support/service-process.js";

export interface MixedCrashOptions {
  cli: string;
  dataDir: string;
  cycles: number;
  /** "1" native, "0" native-free. */
  native: string;
  durability?: "commit" | "flush";
  concurrency?: number;
  /** Load runs this long (random within the range, ms) before the kill. */
  killAfterMs?: [number, number];
  env?: Record<string, string>;
}

export const KINDS = ["enabled", "event", "bulk", "user", "company", "featureEvents", "feedback", "feedbackUpdate"] as const;
export type Kind = (typeof KINDS)[number];

export interface KindFigures {
  attempted: number;
  acknowledged: number;
  /** Acknowledged, then not found after the restarts. */
  lost: number;
  /** A multi-item write (bulk, feature-event batch, company + membership) found in part. */
  partial: number;
  /** Not acknowledged (the connection died) but stored whole: allowed, at-least-once. */
  unacknowledgedStored: number;
}

export interface MixedCrashReport {
  cycles: number;
  native: string;
  durability: string;
  kinds: Record<Kind, KindFigures>;
  evaluations: { answered: number; failed: number };
  /** Answers other than 200 that were not a dead connection (a 5xx here would be a fault). */
  unexpectedStatuses: Record<string, number>;
  /** `/features/enabled` answers whose evaluate events are not stored: what crashes cost (allowed, API.md §3). */
  enabledEventsLost: number;
  /** Restarts that found tracking log records not yet projected, and the most records found so. */
  restartsWithBacklog: number;
  largestBacklogAtRestart: number;
  /** `switchyard projections verify` after the last stop: the projected state equals a rebuild from the log. */
  projectionsEqualRebuild: boolean;
  failures: string[];
}

const BULK_SIZE = 20;
const FEATURE_EVENT_BATCH = 5;
const FEATURE = "huddle";
/**
 * Answers a cycle gets before its kill may fall (any status): about six events, seven evaluations and two feedbacks
 * of every forty, so that even on a loaded machine each cycle crashes a service that was doing real work.
 */
const MIN_ANSWERS_PER_CYCLE = 40;

interface Attempt {
  kind: Kind;
  name: string;
  acknowledged: boolean;
  /** For feedback: the id the create answered with; for updates: the id updated. */
  feedbackId?: string;
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text === "" ? {} : JSON.parse(text) };
}

function emptyFigures(): Record<Kind, KindFigures> {
  return Object.fromEntries(KINDS.map((kind) => [kind, { attempted: 0, acknowledged: 0, lost: 0, partial: 0, unacknowledgedStored: 0 }])) as Record<Kind, KindFigures>;
}

/** Every item of an append log, through the admin API's cursor pages. */
async function readLog(url: string, environmentId: string, log: string): Promise<Record<string, unknown>[]> {
  const all: Record<string, unknown>[] = [];
  let after = "";
  for (;;) {
    const page = await json(`${url}/admin/environments/${environmentId}/${log}?limit=1000${after ? `&after=${after}` : ""}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    if (page.status !== 200) throw new Error(`reading ${log} failed: ${JSON.stringify(page.body)}`);
    const items = Object.values(page.body).find(Array.isArray) as Record<string, unknown>[];
    if (items.length === 0) return all;
    all.push(...items);
    after = page.body.next;
  }
}

export async function runMixedCrashCycles(options: MixedCrashOptions): Promise<MixedCrashReport> {
  const concurrency = options.concurrency ?? 8;
  const [minKill, maxKill] = options.killAfterMs ?? [200, 800];
  const durability = options.durability ?? "commit";
  /** Reads the tracking log's state from the service's "listening" line: what the crash left unprojected. */
  const onLine = (line: string) => {
    if (!line.includes('"listening"')) return;
    const log = (JSON.parse(line) as { trackingLog?: { projected: number; appended: number } }).trackingLog;
    const backlog = log === undefined ? 0 : log.appended - log.projected;
    if (backlog > 0) report.restartsWithBacklog++;
    report.largestBacklogAtRestart = Math.max(report.largestBacklogAtRestart, backlog);
  };
  const startOptions = { cli: options.cli, dataDir: options.dataDir, native: options.native, env: { SWITCHYARD_DURABILITY: durability, ...options.env }, onLine };
  const report: MixedCrashReport = {
    cycles: 0,
    native: options.native,
    durability,
    kinds: emptyFigures(),
    evaluations: { answered: 0, failed: 0 },
    unexpectedStatuses: {},
    enabledEventsLost: 0,
    restartsWithBacklog: 0,
    largestBacklogAtRestart: 0,
    projectionsEqualRebuild: false,
    failures: [],
  };
  const attempts: Attempt[] = [];
  /** Feedback ids acknowledged so far, for updates: [id, the name of its create]. */
  const feedbackIds: [string, string][] = [];

  let server: Running = await start(startOptions);
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" };
  const created = await json(`${server.url}/admin/apps`, { method: "POST", headers: admin, body: JSON.stringify({ name: "mixed-crash" }) });
  const environment = created.body.app.environments[0] as { id: string; secretKey: string; publishableKey: string };
  await json(`${server.url}/admin/apps/${created.body.app.id}/features/${FEATURE}`, { method: "PUT", headers: admin, body: "{}" });
  await json(`${server.url}/admin/environments/${environment.id}/features/${FEATURE}/targeting`, {
    method: "PUT",
    headers: admin,
    body: JSON.stringify({ rules: [{ filter: { type: "context", field: "company.plan", operator: "IS", values: ["pro"] } }] }),
  });
  const headers = { authorization: `Bearer ${environment.secretKey}`, "content-type": "application/json" };

  for (let cycle = 0; cycle < options.cycles; cycle++) {
    const url = server.url;
    let answeredThisCycle = 0;
    const worker = async (workerIndex: number, killed: () => boolean) => {
      const user = `mix-u${workerIndex}`;
      for (let sequence = 0; !killed(); sequence++) {
        const name = `c${cycle}-w${workerIndex}-s${sequence}`;
        const roll = (sequence * 7 + workerIndex) % 20;
        let kind: Kind | "evaluate";
        let path: string;
        let body: unknown;
        let feedbackId: string | undefined;
        if (roll === 0) {
          // One evaluate event, for this name's user: huddle is on for plan pro.
          kind = "enabled";
          path = `/features/enabled?context.user.id=${name}&context.company.plan=pro`;
        } else if (roll < 8) {
          kind = "evaluate";
          path = `/features/evaluated?context.user.id=${user}&context.company.id=co${sequence % 5}&context.company.plan=${sequence % 2 ? "pro" : "free"}`;
        } else if (roll < 11) {
          kind = "event";
          path = "/event";
          body = { event: name, userId: user, attributes: { sequence } };
        } else if (roll < 13) {
          kind = "bulk";
          path = "/bulk";
          body = Array.from({ length: BULK_SIZE }, (_, index) => ({ type: "event", event: `${name}-b${index}`, userId: user }));
        } else if (roll < 14) {
          kind = "user";
          path = "/user";
          body = { userId: name, attributes: { sequence, plan: "pro" } };
        } else if (roll < 15) {
          kind = "company";
          path = "/company";
          body = { companyId: name, userId: user, attributes: { plan: "pro" } };
        } else if (roll < 16) {
          kind = "featureEvents";
          path = "/features/events";
          body = Array.from({ length: FEATURE_EVENT_BATCH }, (_, index) => ({ action: "check", key: `${name}-k${index}`, evalResult: true }));
        } else if (roll < 18 || feedbackIds.length === 0) {
          kind = "feedback";
          path = "/feedback";
          body = { userId: `fb-${name}`, key: FEATURE, score: 1 + (sequence % 5) };
        } else {
          kind = "feedbackUpdate";
          path = "/feedback";
          const [id, createdAs] = feedbackIds[(sequence * 31 + workerIndex) % feedbackIds.length]!;
          feedbackId = id;
          body = { feedbackId: id, userId: `fb-${createdAs}`, key: FEATURE, comment: name };
        }
        let status: number | undefined;
        let answer: any;
        try {
          const response = await fetch(url + path, kind === "evaluate" || kind === "enabled" ? { headers } : { method: "POST", headers, body: JSON.stringify(body) });
          status = response.status;
          answer = await response.json();
        } catch {
          // The connection died with the server: not acknowledged.
        }
        if (status !== undefined) answeredThisCycle++;
        if (status !== undefined && status !== 200) {
          const label = `${status} ${answer?.error?.code ?? ""} ${kind}`.trim();
          report.unexpectedStatuses[label] = (report.unexpectedStatuses[label] ?? 0) + 1;
        }
        if (kind === "evaluate") {
          if (status === 200) report.evaluations.answered++;
          else report.evaluations.failed++;
          continue;
        }
        const acknowledged = status === 200;
        const attempt: Attempt = { kind, name, acknowledged };
        if (kind === "feedback" && acknowledged) {
          attempt.feedbackId = answer.feedbackId as string;
          feedbackIds.push([attempt.feedbackId, name]);
        }
        if (kind === "feedbackUpdate") attempt.feedbackId = feedbackId;
        attempts.push(attempt);
      }
    };
    server = await killUnderLoad(server, [minKill, maxKill], concurrency, worker, () => start(startOptions), () => answeredThisCycle >= MIN_ANSWERS_PER_CYCLE);
    report.cycles++;
  }

  // Read everything back.
  const url = server.url;
  const events = new Set((await readLog(url, environment.id, "events")).map((event) => event.event as string));
  const featureEvents = await readLog(url, environment.id, "feature-events");
  const featureEventKeys = new Set(featureEvents.map((event) => event.key as string));
  /** Users whose /features/enabled call stored its evaluate event. */
  const enabledUsers = new Set(
    featureEvents.filter((event) => event.action === "evaluate" && event.key === FEATURE).map((event) => (event.evalContext as { user?: { id?: string } } | undefined)?.user?.id),
  );
  const feedback = await readLog(url, environment.id, "feedback");
  const feedbackById = new Map(feedback.map((entry) => [entry.feedbackId as string, entry]));
  const feedbackUsers = new Set(feedback.map((entry) => entry.userId as string));
  /** The comment each feedback must at least have reached: the last acknowledged update. */
  const acknowledgedComments = new Map<string, Set<string>>();

  for (const attempt of attempts) {
    const figures = report.kinds[attempt.kind];
    figures.attempted++;
    if (attempt.acknowledged) figures.acknowledged++;
    let present: number;
    let whole: number;
    switch (attempt.kind) {
      case "enabled":
        present = enabledUsers.has(attempt.name) ? 1 : 0;
        whole = 1;
        break;
      case "event":
        present = events.has(attempt.name) ? 1 : 0;
        whole = 1;
        break;
      case "bulk":
        present = Array.from({ length: BULK_SIZE }, (_, index) => events.has(`${attempt.name}-b${index}`)).filter(Boolean).length;
        whole = BULK_SIZE;
        break;
      case "featureEvents":
        present = Array.from({ length: FEATURE_EVENT_BATCH }, (_, index) => featureEventKeys.has(`${attempt.name}-k${index}`)).filter(Boolean).length;
        whole = FEATURE_EVENT_BATCH;
        break;
      case "user": {
        const reply = await json(`${url}/admin/environments/${environment.id}/users/${attempt.name}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        present = reply.status === 200 && reply.body.user.attributes.plan === "pro" ? 1 : 0;
        whole = 1;
        break;
      }
      case "company": {
        const reply = await json(`${url}/admin/environments/${environment.id}/companies/${attempt.name}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        // The company, its attributes and its membership are one write: all three or nothing.
        present = reply.status === 200 ? 1 + (reply.body.company.attributes.plan === "pro" ? 1 : 0) + ((reply.body.company.userIds as string[]).length > 0 ? 1 : 0) : 0;
        whole = 3;
        break;
      }
      case "feedback":
        present = (attempt.feedbackId !== undefined ? feedbackById.has(attempt.feedbackId) : feedbackUsers.has(`fb-${attempt.name}`)) ? 1 : 0;
        whole = 1;
        break;
      case "feedbackUpdate": {
        if (attempt.acknowledged) {
          const comments = acknowledgedComments.get(attempt.feedbackId!) ?? new Set<string>();
          comments.add(attempt.name);
          acknowledgedComments.set(attempt.feedbackId!, comments);
        }
        // Updates overwrite each other: an acknowledged one is "present" if its feedback carries it or a later update.
        const stored = feedbackById.get(attempt.feedbackId!);
        present = stored !== undefined && typeof stored.comment === "string" ? 1 : 0;
        whole = 1;
        break;
      }
    }
    if (present !== 0 && present !== whole) {
      figures.partial++;
      report.failures.push(`${attempt.kind} ${attempt.name}: ${present}/${whole} stored`);
    }
    if (attempt.kind === "enabled") {
      // An evaluation's answer is a read, not an acknowledgement: its events may go with a crash.
      if (attempt.acknowledged && present === 0) report.enabledEventsLost++;
      continue;
    }
    if (attempt.acknowledged && present !== whole) {
      figures.lost++;
      report.failures.push(`acknowledged ${attempt.kind} ${attempt.name}: ${present}/${whole} stored`);
    }
    if (!attempt.acknowledged && present === whole && attempt.kind !== "feedbackUpdate") figures.unacknowledgedStored++;
  }
  // The comment a feedback ends with must be one that was sent for it (acknowledged or not), never an older value
  // once a later acknowledged update exists: checked as "some update reached it" above; here, that it is one of ours.
  for (const [feedbackId, comments] of acknowledgedComments) {
    const stored = feedbackById.get(feedbackId);
    const comment = stored?.comment as string | undefined;
    if (comment === undefined || !/^c\d+-w\d+-s\d+$/.test(comment)) report.failures.push(`feedback ${feedbackId}: comment ${comment} after acknowledged updates ${[...comments].join(", ")}`);
  }
  await server.stop();
  report.projectionsEqualRebuild = verifyProjections(options, report);
  return report;
}

/** `switchyard projections verify` on the stopped service's data dir. */
function verifyProjections(options: MixedCrashOptions, report: MixedCrashReport): boolean {
  const verify = spawnSync(process.execPath, [options.cli, "projections", "verify", "--data-dir", options.dataDir], {
    env: { ...process.env, SWITCHYARD_NATIVE: options.native, SWITCHYARD_LOG: "silent" },
    encoding: "utf8",
    timeout: 120_000,
  });
  if (verify.status === 0) return true;
  report.failures.push(`projections verify exited ${verify.status}: ${verify.stdout}${verify.stderr}`);
  return false;
}
