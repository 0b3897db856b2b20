/** Fills a running service through its management and tracking APIs, as an operator and the SDKs would. */
import type { FeatureDefinition } from "../../src/evaluation/index.js";
import { REFUSAL_CODE } from "./load.js";
import { BENCH_ADMIN_TOKEN } from "./processes.js";

export interface SeededApp {
  appId: string;
  environmentId: string;
  publishableKey: string;
  secretKey: string;
  trackingKey: string;
  features: number;
}

/** A JSON call that must succeed. */
export async function call(baseUrl: string, method: string, path: string, token: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Admin calls in flight while seeding: overlapping writes share a commit (more lanes than this gain nothing). */
const SEED_LANES = 16;

/** Runs `work` over `items` with at most `limit` in flight (admin writes share commits when they overlap). */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}

/** Creates an app whose production environment holds `definitions`. */
export async function seedApp(baseUrl: string, name: string, definitions: readonly FeatureDefinition[]): Promise<SeededApp> {
  const created = (await call(baseUrl, "POST", "/admin/apps", BENCH_ADMIN_TOKEN, { name })) as {
    app: { id: string; trackingKey: string; environments: { id: string; name: string; publishableKey: string; secretKey: string }[] };
  };
  const production = created.app.environments.find((environment) => environment.name === "production")!;
  const appId = encodeURIComponent(created.app.id);
  const environmentId = encodeURIComponent(production.id);
  await inParallel(definitions, SEED_LANES, async (definition) => {
    const key = encodeURIComponent(definition.key);
    await call(baseUrl, "PUT", `/admin/apps/${appId}/features/${key}`, BENCH_ADMIN_TOKEN, {
      description: `Benchmark feature ${definition.key}`,
      ...(definition.stage !== null ? { stage: definition.stage } : {}),
    });
    await call(baseUrl, "PUT", `/admin/environments/${environmentId}/features/${key}/targeting`, BENCH_ADMIN_TOKEN, { rules: definition.targeting.rules });
    if (definition.config.variants.length > 0) {
      await call(baseUrl, "PUT", `/admin/environments/${environmentId}/features/${key}/config`, BENCH_ADMIN_TOKEN, { variants: definition.config.variants });
    }
  });
  return {
    appId: created.app.id,
    environmentId: production.id,
    publishableKey: production.publishableKey,
    secretKey: production.secretKey,
    trackingKey: created.app.trackingKey,
    features: definitions.length,
  };
}

/** How long seeding retries a body refused while the projection is behind. */
const REFUSAL_RETRY_LIMIT_MS = 120_000;
const REFUSAL_RETRY_PAUSE_MS = 100;

/**
 * Posts a `/bulk` body with a publishable key; throws unless logged. Seeding posts bodies back to back, faster than
 * they are projected: a refusal while the projection is behind (503 PROJECTION_BEHIND) is retried, as SDKs retry it.
 */
export async function postBulk(baseUrl: string, publishableKey: string, items: readonly unknown[]): Promise<void> {
  const body = JSON.stringify(items);
  const deadline = performance.now() + REFUSAL_RETRY_LIMIT_MS;
  for (;;) {
    const response = await fetch(`${baseUrl}/bulk`, { method: "POST", headers: { authorization: `Bearer ${publishableKey}`, "content-type": "application/json" }, body });
    const text = await response.text();
    if (response.status === 200) return;
    if (response.status !== 503 || !text.includes(REFUSAL_CODE) || performance.now() > deadline) throw new Error(`POST /bulk answered ${response.status}: ${text.slice(0, 300)}`);
    await new Promise((resolve) => setTimeout(resolve, REFUSAL_RETRY_PAUSE_MS));
  }
}

/** One request that must answer with `expected` (a sanity check before a load run, so errors never pass as speed). */
export async function expectStatus(baseUrl: string, request: { method: string; path: string; headers: Record<string, string>; body?: string }, expected: number): Promise<void> {
  const response = await fetch(baseUrl + request.path, { method: request.method, headers: request.headers, body: request.body });
  const text = await response.text();
  if (response.status !== expected) {
    throw new Error(`${request.method} ${request.path} answered ${response.status} (expected ${expected}): ${text.slice(0, 300)}`);
  }
}
