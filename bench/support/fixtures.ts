/**
 * Deterministic, realistic inputs shared by the micro and load benchmarks: feature definitions with context
 * filters, rollouts, groups and negations; evaluation contexts of a chosen size with varying user ids; tracking
 * bodies; stored event records.
 */
import type { FeatureDefinition, Filter } from "../../src/evaluation/index.js";
import type { ContextOperator } from "../../src/schemas/rules.js";
import type { EventRecord } from "../../src/tracking/tracking-records.js";
import { seededRandom } from "./seeded-random.js";

/** How many distinct users (and so rollout buckets) the repeated-context load cycles through. */
export const DISTINCT_USERS = 1000;
export const DISTINCT_COMPANIES = 100;

/**
 * The traffic a real product sends (issue 15): contexts drawn at random from 10,000 users × 200 companies, so that
 * almost every request is a context the service has not just seen.
 */
export const TRAFFIC_USERS = 10_000;
export const TRAFFIC_COMPANIES = 200;
/**
 * Requests in a distinct-context list. A load generator cycles through it: at 50,000 req/s it comes round every 2 s,
 * past the answer cache's default 1 s, so no answer is ever reused.
 */
export const TRAFFIC_REQUESTS = 100_000;

const PLANS = ["free", "pro", "business", "enterprise"] as const;
const ROLES = ["member", "admin", "owner"] as const;
const LOCATIONS = ["dk", "us", "de", "fr", "jp"] as const;

const pick = <T>(list: readonly T[], index: number): T => list[index % list.length]!;

const context = (field: string, operator: ContextOperator, values?: string[]): Filter =>
  values ? { type: "context", field, operator, values } : { type: "context", field, operator };
const rollout = (key: string, attribute: string, threshold: number): Filter => ({
  type: "rolloutPercentage",
  key,
  partialRolloutAttribute: attribute,
  partialRolloutThreshold: threshold,
});
const group = (operator: "and" | "or", filters: Filter[]): Filter => ({ type: "group", operator, filters });
const negation = (filter: Filter): Filter => ({ type: "negation", filter });

/** The targeting rules of feature `index`: five shapes in turn, each a mix seen in real rule sets. */
function targetingRules(key: string, index: number): { filter: Filter }[] {
  switch (index % 5) {
    case 0:
      return [{ filter: context("company.plan", "ANY_OF", ["business", "enterprise"]) }, { filter: rollout(key, "company.id", 30_000) }];
    case 1:
      return [{ filter: group("and", [context("user.role", "IS", ["admin"]), rollout(key, "user.id", 50_000)]) }];
    case 2:
      return [
        { filter: group("or", [context("user.email", "CONTAINS", ["@acme"]), negation(context("company.plan", "IS", ["free"]))]) },
        { filter: context("other.location", "ANY_OF", ["dk", "de"]) },
      ];
    case 3:
      return [
        { filter: rollout(key, "user.id", 10_000) },
        { filter: context("company.id", "ANY_OF", Array.from({ length: 20 }, (_, item) => `c${item * 3}`)) },
      ];
    default:
      return [{ filter: group("and", [context("company.createdAt", "DATE_AFTER", ["2023-01-01"]), context("company.seats", "GT", ["10"])]) }, { filter: { type: "constant", value: false } }];
  }
}

/** Every other feature has two config variants (a context match and a rollout). */
function configVariants(key: string, index: number): FeatureDefinition["config"]["variants"] {
  if (index % 2 === 1) return [];
  return [
    { filter: context("user.role", "IS", ["admin"]), key: "admin", payload: { limit: 100, theme: "dark" } },
    { filter: rollout(`${key}-config`, "user.id", 50_000), key: "treatment", payload: { limit: 10 } },
  ];
}

/** Feature `index` as stored for an environment. */
export function featureDefinition(index: number): FeatureDefinition {
  const key = `feature-${index}`;
  const variants = configVariants(key, index);
  return {
    key,
    stage: index % 7 === 0 ? "beta" : null,
    targeting: { version: 1, rules: targetingRules(key, index) },
    config: { version: variants.length > 0 ? 1 : 0, variants },
  };
}

export function featureDefinitions(count: number): FeatureDefinition[] {
  return Array.from({ length: count }, (_, index) => featureDefinition(index));
}

/**
 * The flattened query parameters of evaluation context `index` with `size` parameters: the six of a typical SDK
 * (user id, email, role; company id, plan; a location) and beyond that extra user attributes.
 */
export function contextParams(index: number, size = 6): [string, string][] {
  const user = index % DISTINCT_USERS;
  const company = user % DISTINCT_COMPANIES;
  const base: [string, string][] = [
    ["context.user.id", `u${user}`],
    ["context.company.id", `c${company}`],
    ["context.user.email", `user${user}@${user % 4 === 0 ? "acme" : "example"}.com`],
    ["context.user.role", pick(ROLES, user)],
    ["context.company.plan", pick(PLANS, company)],
    ["context.other.location", pick(LOCATIONS, user)],
  ];
  const params = base.slice(0, size);
  for (let extra = params.length; extra < size; extra++) params.push([`context.user.attribute${extra}`, `value-${(user + extra) % 17}`]);
  return params;
}

/** Evaluation context `index` as a query string (what the SDKs send). */
export function contextQuery(index: number, size = 6): string {
  return new URLSearchParams(contextParams(index, size)).toString();
}

/** Evaluation context `index` as the nested object the evaluators take. */
export function contextObject(index: number, size = 6): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [name, value] of contextParams(index, size)) {
    const segments = name.slice("context.".length).split(".");
    let node = root;
    for (const segment of segments.slice(0, -1)) node = (node[segment] ??= {}) as Record<string, unknown>;
    node[segments[segments.length - 1]!] = value;
  }
  return root;
}

/** Traffic user `user` of company `company` as the query parameters a browser SDK sends. */
export function trafficContextParams(user: number, company: number): [string, string][] {
  return [
    ["context.user.id", `u${user}`],
    ["context.user.email", `user${user}@${user % 4 === 0 ? "acme" : "example"}.com`],
    ["context.company.id", `c${company}`],
    ["context.company.plan", pick(PLANS, company)],
    ["context.company.seats", String((company * 7) % 60)],
  ];
}

/** `count` distinct-context query strings, each a random (user, company) pair, the same for the same seed. */
export function trafficQueries(count = TRAFFIC_REQUESTS, seed = 15): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => {
    const user = Math.floor(random() * TRAFFIC_USERS);
    const company = Math.floor(random() * TRAFFIC_COMPANIES);
    return new URLSearchParams(trafficContextParams(user, company)).toString();
  });
}

/**
 * `/bulk` bodies (each within the 10,000-item limit) storing every traffic user and company with the attributes the
 * rules read only from stored data (user.role, company.createdAt): evaluation merges remote context on every request.
 */
export function trafficEntitiesBodies(): Record<string, unknown>[][] {
  const companies: Record<string, unknown>[] = [];
  for (let company = 0; company < TRAFFIC_COMPANIES; company++) {
    companies.push({ type: "company", companyId: `c${company}`, attributes: { name: `Company ${company}`, createdAt: company % 3 === 0 ? "2022-06-01" : "2024-02-15" } });
  }
  const users: Record<string, unknown>[] = [];
  for (let user = 0; user < TRAFFIC_USERS; user++) {
    users.push({ type: "user", userId: `u${user}`, attributes: { name: `User ${user}`, role: pick(ROLES, user), signedUp: "2024-01-10" } });
  }
  const half = TRAFFIC_USERS / 2;
  return [[...companies, ...users.slice(0, half)], users.slice(half)];
}

/** A single `/event` body: a usage event of user `index`. */
export function eventBody(index: number): Record<string, unknown> {
  const user = index % DISTINCT_USERS;
  return {
    event: pick(["report-exported", "dashboard-viewed", "invite-sent"], index),
    userId: `u${user}`,
    companyId: `c${user % DISTINCT_COMPANIES}`,
    attributes: { format: pick(["csv", "pdf"], index), rows: index % 500 },
  };
}

/** A `/bulk` body of `count` events starting at `offset`. */
export function bulkEventsBody(count: number, offset = 0): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, item) => ({ type: "event", ...eventBody(offset + item) }));
}

/** Users and companies a backend's mixed bulk bodies draw from. */
export const BULK_MIX_USERS = 100_000;
export const BULK_MIX_COMPANIES = 2_000;

/**
 * A `/bulk` body as backends send their buffered tracking: 80 % events, 10 % user updates, 10 % company updates
 * (some with a user to associate), drawn from 100,000 users and 2,000 companies.
 */
export function bulkMixedBody(count: number, seed: number): Record<string, unknown>[] {
  const random = seededRandom(seed);
  const items: Record<string, unknown>[] = [];
  for (let index = 0; index < count; index++) {
    const user = Math.floor(random() * BULK_MIX_USERS);
    const company = user % BULK_MIX_COMPANIES;
    const roll = random();
    if (roll < 0.8) items.push({ type: "event", ...eventBody(index), userId: `mu${user}`, companyId: `mc${company}` });
    else if (roll < 0.9) items.push({ type: "user", userId: `mu${user}`, attributes: { name: `User ${user}`, role: pick(ROLES, user), plan: pick(PLANS, company) } });
    else items.push({ type: "company", companyId: `mc${company}`, ...(roll < 0.95 ? { userId: `mu${user}` } : {}), attributes: { name: `Company ${company}`, plan: pick(PLANS, company), seats: company % 300 } });
  }
  return items;
}

/** A `/bulk` body storing users `from..to-1` and as many companies, each with a few attributes. */
export function bulkEntitiesBody(from: number, to: number): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (let index = from; index < to; index++) {
    items.push({ type: "user", userId: `mem-u${index}`, attributes: { name: `User ${index}`, role: pick(ROLES, index) } });
    items.push({ type: "company", companyId: `mem-c${index}`, attributes: { name: `Company ${index}`, plan: pick(PLANS, index), seats: index % 300 } });
  }
  return items;
}

/** The record one `/event` call stores (the shape of the events table). */
export function eventRecord(index: number): EventRecord {
  const body = eventBody(index);
  const now = 1_750_000_000_000 + index;
  return {
    event: body.event as string,
    userId: body.userId as string,
    companyId: body.companyId as string,
    countsForCompanyId: body.companyId as string,
    attributes: body.attributes as Record<string, unknown>,
    timestamp: now,
    receivedAt: now,
    active: true,
  };
}

/**
 * A `/bulk` body storing the users and companies the load uses, with attributes the rules read only from stored
 * data (company.createdAt, company.seats): evaluation then merges remote context, as it does in production.
 */
export function bulkContextEntitiesBody(): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  for (let company = 0; company < DISTINCT_COMPANIES; company++) {
    items.push({
      type: "company",
      companyId: `c${company}`,
      attributes: { name: `Company ${company}`, createdAt: company % 3 === 0 ? "2022-06-01" : "2024-02-15", seats: (company * 7) % 60 },
    });
  }
  for (let user = 0; user < DISTINCT_USERS; user++) {
    items.push({ type: "user", userId: `u${user}`, attributes: { name: `User ${user}`, signedUp: "2024-01-10" } });
  }
  return items;
}
