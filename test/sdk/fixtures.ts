/**
 * Shared setup of the SDK compatibility suites: an app whose features use every kind of rule, created through the
 * management API, and a seeded generator of contexts that exercise those rules (including missing fields).
 */
import { seededRandom } from "../../bench/support/seeded-random.js";
import { createApp, request } from "../support/http.js";

type Filter = Record<string, unknown>;

interface FeatureFixture {
  key: string;
  rules: { filter: Filter }[];
  variants?: { filter: Filter; key: string; payload: unknown }[];
}

const context = (field: string, operator: string, values?: string[]): Filter => ({ type: "context", field, operator, ...(values ? { values } : {}) });
const rollout = (key: string, attribute: string, threshold: number): Filter => ({
  type: "rolloutPercentage",
  key,
  partialRolloutAttribute: attribute,
  partialRolloutThreshold: threshold,
});
const group = (operator: "and" | "or", filters: Filter[]): Filter => ({ type: "group", operator, filters });
const not = (filter: Filter): Filter => ({ type: "negation", filter });
const constant = (value: boolean): Filter => ({ type: "constant", value });

/** Every rule type and most operators, with config variants on some features. */
export const FEATURES: FeatureFixture[] = [
  {
    key: "always-on",
    rules: [{ filter: constant(true) }],
    variants: [{ filter: constant(true), key: "v1", payload: { n: 1 } }],
  },
  {
    key: "enterprise-plan",
    rules: [{ filter: context("company.plan", "ANY_OF", ["enterprise", "business"]) }],
    variants: [
      { filter: context("company.plan", "IS", ["enterprise"]), key: "gold", payload: { seats: 100 } },
      { filter: context("company.tier", "GT", ["1"]), key: "silver", payload: { seats: 10, tags: ["a", "b"] } },
    ],
  },
  { key: "user-rollout", rules: [{ filter: rollout("user-rollout", "user.id", 50_000) }] },
  {
    key: "company-rollout-tier",
    rules: [{ filter: group("and", [context("company.tier", "GT", ["2"]), rollout("company-rollout-tier", "company.id", 30_000)]) }],
  },
  {
    key: "email-or-not-guest",
    rules: [{ filter: group("or", [context("user.email", "CONTAINS", ["@ACME.test"]), not(context("user.role", "IS", ["guest"]))]) }],
  },
  { key: "signup-date", rules: [{ filter: context("company.createdAt", "DATE_AFTER", ["2024-06-01"]) }] },
  {
    key: "beta-web",
    rules: [{ filter: group("and", [context("user.beta", "IS_TRUE"), context("other.platform", "ANY_OF", ["web", "ios"])]) }],
  },
  { key: "no-name", rules: [{ filter: context("user.name", "NOT_SET") }] },
  {
    key: "small-companies",
    rules: [{ filter: context("company.employees", "LT", ["100"]) }],
    variants: [
      { filter: context("company.employees", "GT", ["1000"]), key: "large", payload: "big" },
      { filter: rollout("small-companies", "company.id", 60_000), key: "half", payload: 42 },
    ],
  },
  {
    key: "multi-rule",
    rules: [{ filter: context("user.id", "IS", ["vip-1"]) }, { filter: rollout("multi-rule", "company.id", 75_000) }, { filter: context("user.role", "NOT_ANY_OF", ["admin", "member"]) }],
  },
  { key: "untargeted", rules: [] },
];

export interface AppFixture {
  appId: string;
  environmentId: string;
  publishableKey: string;
  secretKey: string;
  trackingKey: string;
  /** The production environment's flagStateVersion after setup. */
  flagStateVersion: number;
}

/** Creates an app with FEATURES in its production environment. */
export async function createFixtureApp(baseUrl: string, adminToken: string, name = "SDK fixture"): Promise<AppFixture> {
  const { app, production } = await createApp(baseUrl, adminToken, name);
  let flagStateVersion = 0;
  for (const feature of FEATURES) {
    await adminCall(baseUrl, adminToken, "PUT", `/admin/apps/${app.id}/features/${feature.key}`, { description: `Feature ${feature.key}` });
    if (feature.rules.length > 0) {
      const reply = await adminCall(baseUrl, adminToken, "PUT", `/admin/environments/${production.id}/features/${feature.key}/targeting`, { rules: feature.rules });
      flagStateVersion = reply.flagStateVersion;
    }
    if (feature.variants) {
      const reply = await adminCall(baseUrl, adminToken, "PUT", `/admin/environments/${production.id}/features/${feature.key}/config`, { variants: feature.variants });
      flagStateVersion = reply.flagStateVersion;
    }
  }
  return {
    appId: app.id,
    environmentId: production.id,
    publishableKey: production.publishableKey,
    secretKey: production.secretKey,
    trackingKey: app.trackingKey,
    flagStateVersion,
  };
}

/** A management-API call that must succeed. */
export async function adminCall(baseUrl: string, adminToken: string, method: string, path: string, body?: unknown): Promise<Record<string, any>> {
  const reply = await request(baseUrl, method, path, { token: adminToken, ...(body !== undefined ? { body } : {}) });
  if (reply.status !== 200) throw new Error(`${method} ${path} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body;
}


export interface SdkContext {
  user: Record<string, string | number | boolean> & { id: string };
  company?: Record<string, string | number | boolean> & { id: string };
  other?: Record<string, string | number | boolean>;
}

/** Random contexts using the attributes FEATURES read; fields are left out now and then (missing-field paths). */
export function randomContexts(count: number, seed: number, idPrefix: string): SdkContext[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const maybe = (probability: number) => random() < probability;
  const contexts: SdkContext[] = [];
  for (let index = 0; index < count; index++) {
    const user: SdkContext["user"] = { id: index === 7 ? "vip-1" : `${idPrefix}-u${index}-${Math.floor(random() * 1e9)}` };
    if (maybe(0.8)) user.email = pick(["ann@acme.test", "bob@ACME.TEST", "cy@other.test", "dee@acme.testing"]);
    if (maybe(0.8)) user.role = pick(["admin", "guest", "member", "owner"]);
    if (maybe(0.7)) user.beta = pick([true, false, "true", "false"]);
    if (maybe(0.5)) user.name = pick(["Ann", "Bob", ""]);
    const ctx: SdkContext = { user };
    if (maybe(0.9)) {
      const company: NonNullable<SdkContext["company"]> = { id: `${idPrefix}-c${index}-${Math.floor(random() * 1e9)}` };
      if (maybe(0.85)) company.plan = pick(["enterprise", "business", "free", "Enterprise"]);
      if (maybe(0.85)) company.tier = Math.floor(random() * 6);
      if (maybe(0.8)) company.createdAt = pick(["2023-01-15", "2024-06-01", "2024-06-02", "2025-03-10T12:00:00Z", "not a date"]);
      if (maybe(0.8)) company.employees = pick([5, 99, 100, 250, 5000, 1001]);
      ctx.company = company;
    }
    if (maybe(0.7)) ctx.other = { platform: pick(["web", "ios", "android"]) };
    contexts.push(ctx);
  }
  return contexts;
}

/** Polls `check` until it returns a truthy value or the time is up. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 5_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ""}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Every item of an admin cursor-paged list (`events`, `featureEvents`, `feedback`, ...). */
export async function listAll(baseUrl: string, adminToken: string, environmentId: string, path: string, field: string): Promise<Record<string, any>[]> {
  const items: Record<string, any>[] = [];
  let after: string | undefined;
  for (;;) {
    const query = `limit=1000${after !== undefined ? `&after=${encodeURIComponent(after)}` : ""}`;
    const page = await adminCall(baseUrl, adminToken, "GET", `/admin/environments/${environmentId}/${path}?${query}`);
    const list = page[field] as Record<string, any>[];
    items.push(...list);
    if (list.length === 0) return items;
    after = page.next as string;
  }
}

/** A logger that keeps SDK chatter out of the test output but remembers errors for assertions. */
export function quietLogger() {
  const errors: unknown[][] = [];
  return {
    errors,
    debug() {},
    info() {},
    warn() {},
    error(...args: unknown[]) {
      errors.push(args);
    },
  };
}
