/**
 * A change request as the API answers it (API.md §15): each change with a diff against what is current now (rules,
 * variants, the kill switch, prerequisites).
 */
import { prerequisitesOf } from "../../features/feature-records.js";
import type { FeatureRepository } from "../../features/feature-repository.js";
import type { ChangeRequestRecord } from "../../management/governance/change-request-records.js";

type RuleChange = "added" | "removed" | "changed" | "unchanged";

/** Rule by rule, by position: what a person reviewing the request reads. */
function listDiff(from: unknown[], to: unknown[]): { from: unknown[]; to: unknown[]; rules: { index: number; change: RuleChange }[]; changed: boolean } {
  const rules: { index: number; change: RuleChange }[] = [];
  for (let index = 0; index < Math.max(from.length, to.length); index++) {
    const change: RuleChange =
      index >= from.length ? "added" : index >= to.length ? "removed" : JSON.stringify(from[index]) === JSON.stringify(to[index]) ? "unchanged" : "changed";
    rules.push({ index, change });
  }
  return { from, to, rules, changed: rules.some((rule) => rule.change !== "unchanged") };
}

export function presentChangeRequest(services: { features: FeatureRepository }, request: ChangeRequestRecord) {
  const changes = request.changes.map((change) => {
    const current = services.features.rulesOf(request.environmentId, change.feature);
    const diff = {
      ...(change.targeting ? { targeting: listDiff(current.targeting.segmentRules ?? current.targeting.rules, change.targeting.rules) } : {}),
      ...(change.config ? { config: listDiff(current.config.variants, change.config.variants) } : {}),
      ...(change.enabled !== undefined ? { enabled: { from: current.enabled !== false, to: change.enabled, changed: (current.enabled !== false) !== change.enabled } } : {}),
      ...(change.prerequisites ? { prerequisites: listDiff(prerequisitesOf(current), change.prerequisites) } : {}),
      current: { targetingVersion: current.targeting.version, configVersion: current.config.version, enabledVersion: current.enabledVersion ?? 0, prerequisitesVersion: current.prerequisitesVersion ?? 0 },
    };
    return { ...change, diff };
  });
  const approvals = request.reviews.filter((review) => review.revision === request.revision && review.decision === "approve");
  return {
    id: request.id,
    environmentId: request.environmentId,
    title: request.title,
    description: request.description,
    state: request.state,
    revision: request.revision,
    changes,
    approvals,
    reviews: request.reviews,
    createdBy: request.createdBy,
    createdAt: request.createdAt,
    updatedAt: request.updatedAt,
    scheduledAt: request.scheduledAt,
    appliedAt: request.appliedAt,
    suspendedReason: request.suspendedReason,
    comment: request.comment,
  };
}
