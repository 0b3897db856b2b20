/**
 * Kill -9 under load, restart, and check that every acknowledged write is there and no bulk is partly stored.
 * Used by the CI crash test (a few cycles) and by `tools/crash/run.ts` (50+ cycles, figures printed).
 */

/** Answers a cycle gets before its kill may fall: two thirds single events, so each cycle crashes a busy service. */
const MIN_ANSWERS_PER_CYCLE = 20;
import { ADMIN_TOKEN, killUnderLoad, start } from "../support/service-process.js";

export interface CrashOptions {
  cli: string;
  dataDir: string;
  cycles: number;
  /** "1" native, "0" native-free. */
  native: string;
  concurrency?: number;
  bulkSize?: number;
  /** Load runs this long (random within the range, ms) before the kill. */
  killAfterMs?: [number, number];
  env?: Record<string, string>;
}

export interface CrashReport {
  cycles: number;
  acknowledgedEvents: number;
  acknowledgedBulks: number;
  lostEvents: number;
  partialBulks: number;
  /** Bulks that were not acknowledged but were stored whole (allowed: the kill came between commit and answer). */
  unacknowledgedStoredBulks: number;
  failures: string[];
}


async function json(url: string, init: RequestInit): Promise<{ status: number; body: any }> {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.json() };
}

async function readAllEvents(url: string, environmentId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let after = "";
  for (;;) {
    const page = await json(`${url}/admin/environments/${environmentId}/events?limit=1000${after ? `&after=${after}` : ""}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    if (page.status !== 200) throw new Error(`reading events failed: ${JSON.stringify(page.body)}`);
    for (const event of page.body.events as { event: string }[]) counts.set(event.event, (counts.get(event.event) ?? 0) + 1);
    if (page.body.events.length === 0) return counts;
    after = page.body.next;
  }
}

export async function runCrashCycles(options: CrashOptions): Promise<CrashReport> {
  const concurrency = options.concurrency ?? 8;
  const bulkSize = options.bulkSize ?? 20;
  const [minKill, maxKill] = options.killAfterMs ?? [150, 700];
  const report: CrashReport = { cycles: 0, acknowledgedEvents: 0, acknowledgedBulks: 0, lostEvents: 0, partialBulks: 0, unacknowledgedStoredBulks: 0, failures: [] };
  const acknowledgedEvents = new Set<string>();
  const acknowledgedBulks = new Set<string>();
  const attemptedBulks = new Set<string>();

  let server = await start(options);
  const created = await json(`${server.url}/admin/apps`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "crash" }),
  });
  const environment = created.body.app.environments[0] as { id: string; secretKey: string };

  for (let cycle = 0; cycle < options.cycles; cycle++) {
    let answeredThisCycle = 0;
    const worker = async (workerIndex: number, killed: () => boolean) => {
      for (let sequence = 0; !killed(); sequence++) {
        const useBulk = sequence % 3 === 2;
        const name = `c${cycle}-w${workerIndex}-s${sequence}`;
        const body = useBulk
          ? Array.from({ length: bulkSize }, (_, index) => ({ type: "event", event: `${name}-b${index}`, userId: `u${workerIndex}` }))
          : { event: name, userId: `u${workerIndex}` };
        if (useBulk) attemptedBulks.add(name);
        try {
          const response = await fetch(`${server.url}${useBulk ? "/bulk" : "/event"}`, {
            method: "POST",
            headers: { authorization: `Bearer ${environment.secretKey}`, "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          answeredThisCycle++;
          if (response.status === 200) {
            if (useBulk) acknowledgedBulks.add(name);
            else acknowledgedEvents.add(name);
          }
          await response.arrayBuffer();
        } catch {
          // The connection died with the server: not acknowledged, nothing to hold us to.
        }
      }
    };
    // Not before the load got going, however loaded the machine (see MIN_ANSWERS_PER_CYCLE).
    server = await killUnderLoad(server, [minKill, maxKill], concurrency, worker, () => start(options), () => answeredThisCycle >= MIN_ANSWERS_PER_CYCLE);
    report.cycles++;
  }

  const stored = await readAllEvents(server.url, environment.id);
  for (const name of acknowledgedEvents) if (!stored.has(name)) report.lostEvents++;
  for (const name of attemptedBulks) {
    let present = 0;
    for (let index = 0; index < bulkSize; index++) if (stored.has(`${name}-b${index}`)) present++;
    if (present !== 0 && present !== bulkSize) {
      report.partialBulks++;
      report.failures.push(`bulk ${name}: ${present}/${bulkSize} stored`);
    }
    if (acknowledgedBulks.has(name) && present !== bulkSize) {
      report.lostEvents += bulkSize - present;
      report.failures.push(`acknowledged bulk ${name}: ${present}/${bulkSize} stored`);
    }
    if (!acknowledgedBulks.has(name) && present === bulkSize) report.unacknowledgedStoredBulks++;
  }
  report.acknowledgedEvents = acknowledgedEvents.size + acknowledgedBulks.size * bulkSize;
  report.acknowledgedBulks = acknowledgedBulks.size;
  await server.stop();
  return report;
}
