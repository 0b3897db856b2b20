/** Appliers for apps, environments, keys, features, rules and analytics settings. */
import { getAnalyticsSettings, writeAnalyticsSettings } from "../analytics/settings.js";
import { rebuildAggregatesNow } from "../analytics/rebuild.js";
import type { FeatureRecord } from "../features/feature-records.js";
import type { EnvironmentRecord } from "../tenancy/tenancy-records.js";
import { flagStateList, historyLink, type Appliers } from "./apply-context.js";
import { refused } from "./outcome.js";
import { segmentLookup } from "./targeting-writes.js";
import { prepareTargeting } from "./segments/inline.js";
import { applyOptIn } from "../features/opt-in-store.js";
import { dependentsOf } from "../features/prerequisite-graph.js";

type ConfigurationAppliers = Pick<
  Appliers,
  "app.create" | "environment.create" | "key.rotate" | "feature.put" | "feature.archive" | "rules.put" | "analytics.settings" | "analytics.rebuild" | "opt-in.set"
>;

/** An audit entity that is (or belongs to) one environment. */
function environmentEntity(kind: string, environment: EnvironmentRecord) {
  return { kind, id: environment.id, environmentId: environment.id, appId: environment.appId };
}

const FEATURE_FIELDS = ["name", "description", "link", "stage", "optInEnabled", "usageEvents"] as const;

/** The fields a feature write changed, as `{field: {from, to}}` (all of them, from null, for a new feature). */
function featureDiff(before: FeatureRecord | undefined, after: FeatureRecord): Record<string, { from: unknown; to: unknown }> {
  const diff: Record<string, { from: unknown; to: unknown }> = {};
  for (const field of FEATURE_FIELDS) {
    // `name` is optional on stored features: absent reads as null.
    const from = (before ? before[field] : null) ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) diff[field] = { from, to };
  }
  return diff;
}

export const CONFIGURATION_APPLIERS: ConfigurationAppliers = {
  "opt-in.set"({ store }, change) {
    const { environmentId, appId, featureKey, scope, entityId, optedIn } = change;
    const result = applyOptIn(store, { environmentId, appId, featureKey, scope, id: entityId, optedIn }, change.at);
    if (result.kind === "no-environment") return refused("UNAUTHORIZED", "The key's environment no longer exists.");
    if (result.kind === "no-opt-in-feature") return refused("NOT_FOUND", `No feature ${featureKey} that allows opt-in.`);
    // An end user's choice, not a management action: not audited.
    return {
      ok: true,
      value: { flagStateVersion: result.flagStateVersion, changed: result.changed },
      audit: null,
      effects: result.changed ? { flagStates: [[environmentId, result.flagStateVersion]] } : {},
    };
  },
  "app.create"({ tenancy }, change) {
    if (tenancy.getApp(change.app.id)) return refused("CONFLICT", `App ${change.app.id} exists.`);
    tenancy.insertApp(change.app, change.trackingKeyDigest, change.environments);
    return {
      ok: true,
      value: { app: change.app, environments: change.environments },
      audit: {
        action: "app.create",
        entity: { kind: "app", id: change.app.id, appId: change.app.id },
        details: { name: change.app.name, environments: change.environments.map((environment) => ({ id: environment.id, name: environment.name })) },
      },
      effects: { keys: { revokedDigests: [] } },
    };
  },

  "environment.create"({ tenancy }, change) {
    const { environment } = change;
    if (tenancy.getEnvironment(environment.id)) return refused("CONFLICT", `Environment ${environment.id} exists.`);
    if (!tenancy.insertEnvironment(environment)) return refused("NOT_FOUND", `No app ${environment.appId}.`);
    return {
      ok: true,
      value: { environment },
      audit: {
        action: "environment.create",
        entity: environmentEntity("environment", environment),
        details: { name: environment.name },
      },
      effects: { keys: { revokedDigests: [] } },
    };
  },

  "key.rotate"({ tenancy }, change) {
    const replaced = tenancy.replaceKey(change.environmentId, change.kind, change.digest, change.hint);
    if (!replaced) return refused("NOT_FOUND", `No environment ${change.environmentId}.`);
    return {
      ok: true,
      value: { environment: replaced.environment },
      audit: {
        action: "key.rotate",
        entity: environmentEntity("key", replaced.environment),
        details: { kind: change.kind, key: change.hint },
      },
      effects: { keys: { revokedDigests: [replaced.revokedDigest] } },
    };
  },

  "feature.put"({ features }, change) {
    if (change.createOnly && features.getFeature(change.appId, change.featureKey)) return refused("CONFLICT", `Feature ${change.featureKey} exists.`);
    const written = features.writeFeature(change.appId, change.featureKey, change.fields, change.featureId, change.at, change.actor);
    if (!written) return refused("NOT_FOUND", `No app ${change.appId}.`);
    const { feature, previous } = written;
    return {
      ok: true,
      value: { feature, created: previous === undefined },
      audit: {
        action: previous ? "feature.update" : "feature.create",
        entity: { kind: "feature", id: feature.id, key: feature.key, appId: change.appId },
        details: { changes: featureDiff(previous, feature) },
      },
      effects: { flagStates: flagStateList(written.flagStates) },
    };
  },

  "feature.archive"({ features, tenancy }, change) {
    // A feature others depend on stays: archived, it would silently turn them off (or on) everywhere.
    const dependents = (tenancy.getApp(change.appId)?.environmentIds ?? []).flatMap((environmentId) => {
      const environment = tenancy.getEnvironment(environmentId);
      const keys = dependentsOf(features.prerequisiteGraph(environmentId, change.appId), change.featureKey);
      return keys.map((key) => `${key} (${environment?.name ?? environmentId})`);
    });
    if (dependents.length > 0) {
      return refused("CONFLICT", `Feature ${change.featureKey} is a prerequisite of ${dependents.join(", ")}: remove it from their prerequisites first.`);
    }
    const removed = features.removeFeature(change.appId, change.featureKey, change.at);
    if (!removed) return refused("NOT_FOUND", `No feature ${change.featureKey} in app ${change.appId}.`);
    return {
      ok: true,
      value: { feature: removed.feature },
      audit: { action: "feature.archive", entity: { kind: "feature", id: removed.feature.id, key: change.featureKey, appId: change.appId }, details: {} },
      effects: { flagStates: flagStateList(removed.flagStates) },
    };
  },

  "rules.put"(context, change) {
    const { features, tenancy } = context;
    const environment = tenancy.getEnvironment(change.environmentId);
    const feature = environment && features.getFeature(environment.appId, change.featureKey);
    if (!feature) return refused("NOT_FOUND", `No feature ${change.featureKey}.`);
    // Segment references are inlined here, against the segments as they are when the change is applied.
    const prepared = change.kind === "targeting" ? prepareTargeting(change.list, segmentLookup(context, environment!.appId)) : undefined;
    if (prepared && !prepared.ok) return refused("INVALID_RULES", prepared.message);
    const before = features.rulesOf(change.environmentId, change.featureKey);
    const link = historyLink(context, change);
    const written = prepared
      ? features.writeRules(change.environmentId, change.featureKey, "targeting", prepared.served, change.at, link, prepared.segmentRules)!
      : features.writeRules(change.environmentId, change.featureKey, change.kind, change.list, change.at, link)!;
    const fromVersion = change.kind === "targeting" ? before.targeting.version : before.config.version;
    return {
      ok: true,
      value: { state: written.state, flagStateVersion: written.flagStateVersion },
      audit: {
        action: `${change.kind}.update`,
        entity: { kind: change.kind, id: feature.id, key: change.featureKey, environmentId: change.environmentId, appId: environment!.appId },
        details: { fromVersion, toVersion: fromVersion + 1, flagStateVersion: written.flagStateVersion },
      },
      effects: { flagStates: [[change.environmentId, written.flagStateVersion]] },
    };
  },

  "analytics.settings"({ store, tenancy }, change) {
    const environment = tenancy.getEnvironment(change.environmentId);
    if (!environment) return refused("NOT_FOUND", `No environment ${change.environmentId}.`);
    const before = getAnalyticsSettings(store, change.environmentId);
    const settings = writeAnalyticsSettings(store, change.environmentId, change.settings);
    return {
      ok: true,
      value: { settings },
      audit: {
        action: "analytics.settings",
        entity: environmentEntity("analytics", environment),
        details: { from: before, to: settings },
      },
    };
  },

  "analytics.rebuild"({ store, tenancy }, change) {
    const environment = tenancy.getEnvironment(change.environmentId);
    if (!environment) return refused("NOT_FOUND", `No environment ${change.environmentId}.`);
    const report = rebuildAggregatesNow(store, change.environmentId);
    return {
      ok: true,
      value: { report },
      audit: {
        action: "analytics.rebuild",
        entity: environmentEntity("analytics", environment),
        details: { ...report },
      },
    };
  },
};
