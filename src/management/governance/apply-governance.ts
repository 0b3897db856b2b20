/** Appliers for the kill switch and the approval policy of an environment (API.md §15). */
import type { Appliers } from "../apply-context.js";
import { historyLink } from "../apply-context.js";
import { refused } from "../outcome.js";
import { PolicyRepository } from "./policy.js";

type GovernanceAppliers = Pick<Appliers, "feature.enabled" | "policy.put">;

export const GOVERNANCE_APPLIERS: GovernanceAppliers = {
  "feature.enabled"(context, change) {
    const { features, tenancy } = context;
    const environment = tenancy.getEnvironment(change.environmentId);
    const feature = environment && features.getFeature(environment.appId, change.featureKey);
    if (!environment || !feature) return refused("NOT_FOUND", `No feature ${change.featureKey}.`);
    const current = features.rulesOf(environment.id, feature.key);
    const wasEnabled = current.enabled !== false;
    if (wasEnabled === change.enabled) {
      // Already there: nothing moves, nothing to announce.
      return { ok: true, value: { enabled: change.enabled, version: current.enabledVersion ?? 0, flagStateVersion: environment.flagStateVersion, changed: false }, audit: null };
    }
    const written = features.writeEnabled(environment.id, feature.key, change.enabled, change.at, historyLink(context, change))!;
    return {
      ok: true,
      value: { enabled: change.enabled, version: written.version, flagStateVersion: written.flagStateVersion, changed: true },
      audit: {
        action: change.enabled ? "feature.enable" : "feature.disable",
        entity: { kind: "feature", id: feature.id, key: feature.key, environmentId: environment.id, appId: environment.appId },
        details: { enabled: { from: wasEnabled, to: change.enabled }, version: written.version, flagStateVersion: written.flagStateVersion },
      },
      effects: { flagStates: [[environment.id, written.flagStateVersion]] },
    };
  },

  "policy.put"(context, change) {
    const environment = context.tenancy.getEnvironment(change.environmentId);
    if (!environment) return refused("NOT_FOUND", `No environment ${change.environmentId}.`);
    const policies = new PolicyRepository(context.store);
    const before = policies.policyOf(environment);
    const policy = { ...before, ...Object.fromEntries(Object.entries(change.policy).filter(([, value]) => value !== undefined)) };
    policies.putPolicy(environment.id, policy);
    return {
      ok: true,
      value: { policy },
      audit: {
        action: "policy.update",
        entity: { kind: "policy", id: environment.id, environmentId: environment.id, appId: environment.appId },
        details: { from: before, to: policy },
      },
    };
  },
};
