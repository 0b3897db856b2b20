/** Traffic for guarded-rollout tests (API.md §17): the official node SDK checking a feature and tracking guard events. */
import { BucketClient } from "@bucketco/node-sdk";
import type { TestServer } from "./server.js";
import { seededRandom } from "../../bench/support/seeded-random.js";

export { seededRandom };

const quietLogger = () => ({ debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined });

export interface Traffic {
  /** Per unit, the chance of each guard event, by whether the SDK saw the feature on for it. */
  rates: Record<string, { exposed: number; control: number }>;
  /** Whether a unit passes the rules from before the rollout (its company's plan). */
  plan: (random: () => number) => string;
}

/**
 * One round of traffic: a fresh SDK client (so it holds the rules the latest step wrote), `units` new companies, each
 * checked once and then tracking its events; the SDK's batches reach /bulk in call order.
 */
export async function sendRound(server: TestServer, secretKey: string, featureKey: string, traffic: Traffic, units: number, random: () => number, prefix: string): Promise<{ on: number; off: number }> {
  const client = new BucketClient({ secretKey, apiBaseUrl: server.url, offline: false, logger: quietLogger(), batchOptions: { flushOnExit: false, maxSize: 500 } });
  await client.initialize();
  let on = 0;
  for (let unit = 0; unit < units; unit++) {
    const companyId = `${prefix}-${Math.floor(random() * 1e12).toString(36)}`;
    const userId = `user-${companyId}`;
    const enabled = client.getFeature({ user: { id: userId }, company: { id: companyId, plan: traffic.plan(random) } }, featureKey).isEnabled;
    if (enabled) on++;
    for (const [event, rate] of Object.entries(traffic.rates)) {
      if (random() < (enabled ? rate.exposed : rate.control)) await client.track(userId, event, { companyId });
    }
  }
  await client.flush();
  (client as { destroy?: () => void }).destroy?.();
  return { on, off: units - on };
}

