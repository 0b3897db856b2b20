/**
 * What an environment serves and evaluates for each feature: its own targeting rules (none while its kill switch is
 * off) with its prerequisites compiled in (API.md §15). `GET /features` serves these and the server's evaluator
 * compiles these, so an SDK evaluating locally with the reference evaluator agrees with the server bit for bit.
 *
 * A feature's *access* for a context is "any of its served rules matches" — its own rules ORed, ANDed with its own
 * prerequisites, transitively. Each rule of a feature with prerequisites is served as
 * `{type: "group", operator: "and", filters: [rule.filter, access(parent₁), …]}`, with `negation` around a parent
 * whose access must be off. A parent's rollout filters are copied as they are, so they keep the parent's own `key`,
 * which is what the reference hashes (`${filter.key}.${attribute}`): a user in a parent's 30% is the same user in the
 * child's copy of it. Opt-ins are not part of a parent's access (they are per feature, API.md §3).
 */
import type { Filter } from "../schemas/rules.js";
import { prerequisitesOf, servedTargetingRules, type EnvironmentFeatureState, type Prerequisite } from "./feature-records.js";

/** One feature of an environment: its key and its state there. */
export interface FeatureState {
  key: string;
  state: EnvironmentFeatureState;
}

/** A served targeting rule: the saved rule (its other fields kept) whose filter may carry its prerequisites. */
type ServedRule = { filter: Filter } & Record<string, unknown>;

const NEVER: Filter = Object.freeze({ type: "constant", value: false }) as Filter;

/**
 * The served targeting rules of every feature of one environment, by key. Features without prerequisites are served
 * their own (switched-on) rules, the very arrays stored.
 */
export function servedRulesOf(features: readonly FeatureState[]): Map<string, unknown[]> {
  const byKey = new Map(features.map((entry) => [entry.key, entry.state]));
  const access = new Map<string, Filter>();
  const visiting = new Set<string>();

  /** The filter that matches exactly when `key`'s access is on: its own rules ORed, ANDed with its prerequisites. */
  const accessOf = (key: string): Filter => {
    const known = access.get(key);
    if (known !== undefined) return known;
    const state = byKey.get(key);
    // An unknown parent or (never stored: writes refuse them) a cycle: nobody has access through it.
    if (state === undefined || visiting.has(key)) return NEVER;
    visiting.add(key);
    const own = ownRules(state).map((rule) => rule.filter);
    const anyOwn: Filter = own.length === 0 ? NEVER : own.length === 1 ? own[0]! : { type: "group", operator: "or", filters: own };
    const required = own.length === 0 ? [] : requirementsOf(prerequisitesOf(state));
    const filter: Filter = own.length === 0 ? NEVER : required.length === 0 ? anyOwn : { type: "group", operator: "and", filters: [anyOwn, ...required] };
    visiting.delete(key);
    access.set(key, filter);
    return filter;
  };

  const requirementsOf = (prerequisites: readonly Prerequisite[]): Filter[] =>
    prerequisites.map(({ feature, enabled }) => {
      const parent = accessOf(feature);
      return enabled ? parent : { type: "negation", filter: parent };
    });

  const served = new Map<string, unknown[]>();
  for (const { key, state } of features) {
    const own = ownRules(state);
    const prerequisites = prerequisitesOf(state);
    if (prerequisites.length === 0 || own.length === 0) {
      served.set(key, own);
      continue;
    }
    visiting.add(key);
    const required = requirementsOf(prerequisites);
    visiting.delete(key);
    served.set(key, own.map((rule) => ({ ...rule, filter: { type: "group", operator: "and", filters: [rule.filter, ...required] } })));
  }
  return served;
}

function ownRules(state: EnvironmentFeatureState): ServedRule[] {
  return servedTargetingRules(state) as ServedRule[];
}
