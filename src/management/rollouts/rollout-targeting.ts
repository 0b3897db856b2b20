/**
 * The targeting a rollout step writes (API.md §17): each rule from before the rollout ANDed with one
 * `rolloutPercentage` filter on the feature's key and the rollout's unit. Raising the threshold only adds contexts
 * (a unit's bucket never moves), so units once in stay in, and the SDKs' local evaluation stays exact.
 */
import { ROLLOUT_SCALE } from "../../evaluation/rollout-bucket.js";
import type { RolloutAttribute } from "./rollout-records.js";

export function shareFilter(featureKey: string, attribute: RolloutAttribute, percent: number) {
  return { type: "rolloutPercentage", key: featureKey, partialRolloutAttribute: attribute, partialRolloutThreshold: Math.round((percent * ROLLOUT_SCALE) / 100) };
}

/** The rules of a step: at 100 % the rules from before, bare; below, each ANDed with the share. */
export function stepRules(baseRules: unknown[], featureKey: string, attribute: RolloutAttribute, percent: number): unknown[] {
  if (percent >= 100) return baseRules;
  const share = shareFilter(featureKey, attribute, percent);
  return baseRules.map((rule) => {
    const { filter, ...rest } = rule as { filter: unknown };
    return { ...rest, filter: { type: "group", operator: "and", filters: [filter, share] } };
  });
}

/** Whether a rule tree hashes on this key and attribute already: then the share's units are not independent of it. */
export function hashesOn(rules: unknown, featureKey: string, attribute: string): boolean {
  if (Array.isArray(rules)) return rules.some((each) => hashesOn(each, featureKey, attribute));
  if (typeof rules !== "object" || rules === null) return false;
  const node = rules as Record<string, unknown>;
  if (node.type === "rolloutPercentage" && node.key === featureKey && node.partialRolloutAttribute === attribute) return true;
  return Object.values(node).some((value) => typeof value === "object" && hashesOn(value, featureKey, attribute));
}
