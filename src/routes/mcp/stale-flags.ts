/**
 * Which flags an agent may clean up (API.md §12, docs/DECISIONS.md "Stale flags"). A flag is stale when it is at least
 * STALE_DAYS old and either
 * - `unevaluated`: no feature event for its key (any action: SDK checks, evaluations, `/features/enabled`) was
 *   received in any environment of its app for STALE_DAYS days; or
 * - `constant`: in every environment its targeting has not changed for STALE_DAYS days (never targeted counts as
 *   unchanged since the flag was made), the rules give one answer whatever the context, and that answer is the same in
 *   every environment. "Whatever the context" is decided from the rules themselves: constant filters, rollouts of 0 %
 *   (off) or 100 % (on), and groups and negations of those; any context or partial-rollout filter, or opt-in, depends
 *   on who asks.
 * The kill switch counts as targeting: a feature switched off answers "off" to everyone there, and moving the switch
 * is a change of who gets it.
 * Reads only: the targeting history, and each environment's feature-event log through EvaluationRecency (the newest
 * STALE_DAYS days once, then what was appended since).
 */
import type { FeatureRepository } from "../../features/feature-repository.js";
import { servedTargetingRules, type FeatureRecord } from "../../features/feature-records.js";
import type { KvStore } from "../../storage/kv.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { EvaluationRecency } from "./evaluation-recency.js";
import { MAX_ROLLOUT_THRESHOLD } from "../../schemas/rules.js";

export const STALE_DAYS = 30;
const DAY_MS = 86_400_000;

export interface StaleVerdict {
  stale: boolean;
  reason: "unevaluated" | "constant" | null;
}

/** The one answer a filter gives every context, or undefined when it depends on the context. */
export function uniformAnswer(filter: unknown): boolean | undefined {
  if (typeof filter !== "object" || filter === null) return undefined;
  const node = filter as { type?: unknown; value?: unknown; partialRolloutThreshold?: unknown; operator?: unknown; filters?: unknown; filter?: unknown };
  switch (node.type) {
    case "constant":
      return node.value === true;
    case "rolloutPercentage":
      if (typeof node.partialRolloutThreshold !== "number") return undefined;
      if (node.partialRolloutThreshold <= 0) return false;
      return node.partialRolloutThreshold >= MAX_ROLLOUT_THRESHOLD ? true : undefined;
    case "negation": {
      const inner = uniformAnswer(node.filter);
      return inner === undefined ? undefined : !inner;
    }
    case "group": {
      const members = Array.isArray(node.filters) ? node.filters.map(uniformAnswer) : [];
      // and: one false member decides, all true decide; or: one true decides, all false decide.
      const decisive = node.operator === "or";
      if (members.includes(decisive)) return decisive;
      return members.every((answer) => answer === !decisive) ? !decisive : undefined;
    }
    default:
      return undefined;
  }
}

/** The one answer a rule list gives every context (on when any rule matches), or undefined. */
export function uniformRulesAnswer(rules: readonly unknown[]): boolean | undefined {
  const answers = rules.map((rule) => uniformAnswer((rule as { filter?: unknown } | null)?.filter));
  if (answers.includes(true)) return true;
  return answers.every((answer) => answer === false) ? false : undefined;
}

/** One index per store: it lives as long as the store it reads. */
const recencyByStore = new WeakMap<KvStore, EvaluationRecency>();

function recencyOf(store: KvStore): EvaluationRecency {
  let recency = recencyByStore.get(store);
  if (recency === undefined) recencyByStore.set(store, (recency = new EvaluationRecency(store)));
  return recency;
}

/** The verdict for each of `features` (live features of one app whose environments are `environments`). */
export function staleFlags(
  store: KvStore,
  repository: FeatureRepository,
  environments: readonly EnvironmentRecord[],
  features: readonly FeatureRecord[],
  now: number,
): Map<string, StaleVerdict> {
  const since = now - STALE_DAYS * DAY_MS;
  const verdicts = new Map<string, StaleVerdict>();
  const old = features.filter((feature) => Date.parse(feature.createdAt) <= since);
  for (const feature of features) verdicts.set(feature.key, { stale: false, reason: null });
  if (old.length === 0) return verdicts;

  const evaluated = new Set<string>();
  let complete = true;
  const recency = recencyOf(store);
  for (const environment of environments) {
    const seen = recency.evaluatedSince(environment.id, since);
    for (const key of seen.keys) evaluated.add(key);
    complete &&= seen.complete;
  }

  for (const feature of old) {
    if (complete && !evaluated.has(feature.key)) {
      verdicts.set(feature.key, { stale: true, reason: "unevaluated" });
      continue;
    }
    if (!feature.optInEnabled && servesOneAnswer(repository, environments, feature.key, since)) verdicts.set(feature.key, { stale: true, reason: "constant" });
  }
  return verdicts;
}

function servesOneAnswer(repository: FeatureRepository, environments: readonly EnvironmentRecord[], key: string, since: number): boolean {
  let answer: boolean | undefined;
  for (const environment of environments) {
    const lastChange = repository
      .listHistory(environment.id, key)
      .filter((entry) => entry.kind === "targeting" || entry.kind === "enabled")
      .at(-1);
    if (lastChange && Date.parse(lastChange.at) > since) return false;
    const here = uniformRulesAnswer(servedTargetingRules(repository.rulesOf(environment.id, key)));
    if (here === undefined || (answer !== undefined && here !== answer)) return false;
    answer = here;
  }
  return true;
}
