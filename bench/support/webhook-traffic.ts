/**
 * The two ends of webhook traffic for the deliveries-under-load bench: a counting receiver on 127.0.0.1 that answers
 * 200 and verifies a sample of signatures with the `standardwebhooks` package (an independent verifier), and a writer
 * of targeting changes through the admin API, each of which queues one `targeting.changed` delivery per webhook.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { BENCH_ADMIN_TOKEN } from "./processes.js";

/** Every this many deliveries one signature is verified (the first always): verifying all would load the receiver. */
const VERIFY_EVERY = 25;

export interface CountingReceiver {
  /** The URL of webhook `index` (each webhook gets its own path, so its deliveries are counted apart). */
  urlOf(index: number): string;
  /** Tells the receiver webhook `index`'s secret, so its signatures can be verified. */
  setSecret(index: number, secret: string): void;
  /** Distinct deliveries (by `webhook-id`) received so far, over every webhook. */
  delivered(): number;
  /** Deliveries whose `webhook-id` had been received before (at least once: a retry after an unrecorded answer). */
  duplicates(): number;
  verified(): number;
  /** Signatures that did not verify, or deliveries without the headers: each one is a failure of the service. */
  badSignatures(): string[];
  close(): Promise<void>;
}

export async function startCountingReceiver(): Promise<CountingReceiver> {
  const secrets = new Map<number, Webhook>();
  const seen = new Set<string>();
  const bad: string[] = [];
  let duplicates = 0;
  let verified = 0;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const id = request.headers["webhook-id"];
      const index = Number(/^\/hook\/(\d+)$/.exec(request.url ?? "")?.[1] ?? Number.NaN);
      if (typeof id !== "string") bad.push(`a delivery to ${request.url} without webhook-id`);
      else if (seen.has(id)) duplicates++;
      else {
        seen.add(id);
        const verifier = secrets.get(index);
        if (verifier !== undefined && (seen.size === 1 || seen.size % VERIFY_EVERY === 0)) {
          try {
            verifier.verify(Buffer.concat(chunks).toString("utf8"), {
              "webhook-id": id,
              "webhook-timestamp": String(request.headers["webhook-timestamp"]),
              "webhook-signature": String(request.headers["webhook-signature"]),
            });
            verified++;
          } catch (error) {
            bad.push(`${id}: ${(error as Error).message}`);
          }
        }
      }
      response.writeHead(200, { "content-type": "text/plain" });
      response.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    urlOf: (index) => `http://127.0.0.1:${port}/hook/${index}`,
    setSecret: (index, secret) => secrets.set(index, new Webhook(secret)),
    delivered: () => seen.size,
    duplicates: () => duplicates,
    verified: () => verified,
    badSignatures: () => bad,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Subscribes `url` to every event of the app (`*`); answers the webhook's id and its signing secret. */
export async function createWebhook(baseUrl: string, appId: string, url: string): Promise<{ id: string; secret: string }> {
  const response = await fetch(`${baseUrl}/admin/apps/${encodeURIComponent(appId)}/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ url, events: ["*"], description: "bench: deliveries under load" }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`creating the webhook answered ${response.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { webhook: { id: string }; secret: string };
  return { id: body.webhook.id, secret: body.secret };
}

/** The feature whose targeting the change stream rewrites (seeded beside the evaluated ones, rewritten only here). */
export const CHURN_FEATURE = "webhook-churn";

/** Targeting rules that differ from one change to the next: a user rollout whose threshold moves with `sequence`. */
function churnRules(sequence: number): unknown[] {
  return [{ filter: { type: "rolloutPercentage", key: CHURN_FEATURE, partialRolloutAttribute: "user.id", partialRolloutThreshold: (sequence % 100) * 1000 } }];
}

export interface ChangeCounts {
  /** Changes the service answered 200 to: committed, each with its deliveries queued. */
  committed: number;
  failed: number;
  firstFailure?: string;
}

/** How a change stream is offered: `rate` changes per second, or as fast as they commit with `inFlight` writers. */
export type ChangePace = { rate: number } | { inFlight: number };

export interface ChangeStream {
  /** Changes committed so far. */
  committed(): number;
  /** Stops sending; answers the counts once the changes in flight are answered. */
  stop(): Promise<ChangeCounts>;
}

/**
 * Sends targeting changes (`PUT …/targeting` with the admin token) until stopped. Paced changes follow a schedule and
 * skip ahead rather than burst when behind; `sequenceStart` keeps every change different from the one before.
 */
export function startChangeStream(baseUrl: string, environmentId: string, pace: ChangePace, sequenceStart: number): ChangeStream {
  const path = `${baseUrl}/admin/environments/${encodeURIComponent(environmentId)}/features/${CHURN_FEATURE}/targeting`;
  const counts: ChangeCounts = { committed: 0, failed: 0 };
  let sequence = sequenceStart;
  let stopped = false;
  const change = async () => {
    try {
      const response = await fetch(path, {
        method: "PUT",
        headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ rules: churnRules(sequence++) }),
      });
      const text = await response.text();
      if (response.status === 200) counts.committed++;
      else {
        counts.failed++;
        counts.firstFailure ??= `${response.status}: ${text.slice(0, 200)}`;
      }
    } catch (error) {
      counts.failed++;
      counts.firstFailure ??= (error as Error).message;
    }
  };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
  const lanes: Promise<void>[] = [];
  if ("inFlight" in pace) {
    for (let lane = 0; lane < pace.inFlight; lane++) {
      lanes.push((async () => {
        while (!stopped) await change();
      })());
    }
  } else {
    const intervalMs = 1000 / pace.rate;
    const pending = new Set<Promise<void>>();
    lanes.push((async () => {
      let due = performance.now();
      while (!stopped) {
        const sent = change();
        pending.add(sent);
        void sent.finally(() => pending.delete(sent));
        due += intervalMs;
        // More than 50 ms behind: restart the schedule rather than send a burst to catch up.
        if (performance.now() - due > 50) due = performance.now();
        await sleep(due - performance.now());
      }
      await Promise.all(pending);
    })());
  }
  return {
    committed: () => counts.committed,
    async stop() {
      stopped = true;
      await Promise.all(lanes);
      return { ...counts };
    },
  };
}
