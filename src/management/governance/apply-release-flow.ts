/** Appliers for a feature's prerequisites and its promotion between environments (API.md §15). */
import type { ValidationIssue } from "../../errors/catalogue.js";
import { prerequisitesOf, type Prerequisite } from "../../features/feature-records.js";
import type { Appliers } from "../apply-context.js";
import { historyLink } from "../apply-context.js";
import { refused } from "../outcome.js";
import { prepareTargeting } from "../segments/inline.js";
import { segmentLookup } from "../targeting-writes.js";
import { prerequisiteIssues } from "./prerequisite-checks.js";

type ReleaseFlowAppliers = Pick<Appliers, "feature.prerequisites" | "feature.promote">;

const invalid = (message: string, validationErrors: ValidationIssue[]) => ({ ok: false as const, error: { code: "INVALID_BODY" as const, message, validationErrors } });

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

export const RELEASE_FLOW_APPLIERS: ReleaseFlowAppliers = {
  "feature.prerequisites"(context, change) {
    const { features, tenancy } = context;
    const environment = tenancy.getEnvironment(change.environmentId);
    const feature = environment && features.getFeature(environment.appId, change.featureKey);
    if (!environment || !feature) return refused("NOT_FOUND", `No feature ${change.featureKey}.`);
    // Checked here, against the store as it is when the change applies, so every node decides alike.
    const graph = features.prerequisiteGraph(environment.id, environment.appId);
    const issues = prerequisiteIssues(features, environment.appId, feature.key, change.prerequisites, graph, "prerequisites");
    if (issues.length > 0) return invalid(issues.map((issue) => issue.message).join("; "), issues);
    const current = features.rulesOf(environment.id, feature.key);
    const before = prerequisitesOf(current);
    if (same(before, change.prerequisites)) {
      return { ok: true, value: { prerequisites: before, version: current.prerequisitesVersion ?? 0, flagStateVersion: environment.flagStateVersion, changed: false }, audit: null };
    }
    const prerequisites: Prerequisite[] = change.prerequisites.map(({ feature: parent, enabled }) => ({ feature: parent, enabled }));
    const written = features.writePrerequisites(environment.id, feature.key, prerequisites, change.at, historyLink(context, change))!;
    return {
      ok: true,
      value: { prerequisites, version: written.version, flagStateVersion: written.flagStateVersion, changed: true },
      audit: {
        action: "prerequisites.update",
        entity: { kind: "feature", id: feature.id, key: feature.key, environmentId: environment.id, appId: environment.appId },
        details: { from: before, to: prerequisites, version: written.version, flagStateVersion: written.flagStateVersion },
      },
      effects: { flagStates: [[environment.id, written.flagStateVersion]] },
    };
  },

  "feature.promote"(context, change) {
    const { features, tenancy } = context;
    const from = tenancy.getEnvironment(change.fromEnvironmentId);
    const to = tenancy.getEnvironment(change.toEnvironmentId);
    if (!from) return refused("NOT_FOUND", `No environment ${change.fromEnvironmentId}.`);
    if (!to || to.appId !== from.appId) return invalid(`No environment ${change.toEnvironmentId} in this app`, [{ path: "to", message: "must be another environment of the feature's app" }]);
    if (to.id === from.id) return invalid("A feature is promoted to another environment", [{ path: "to", message: "must differ from the environment promoted from" }]);
    const feature = features.getFeature(from.appId, change.featureKey);
    if (!feature) return refused("NOT_FOUND", `No feature ${change.featureKey}.`);
    const source = features.rulesOf(from.id, feature.key);
    const target = features.rulesOf(to.id, feature.key);
    // Targeting is copied as saved (segment references too: segments belong to the app) and inlined for the target.
    const savedRules = source.targeting.segmentRules ?? source.targeting.rules;
    const copyTargeting = !same(savedRules, target.targeting.segmentRules ?? target.targeting.rules);
    const copyConfig = !same(source.config.variants, target.config.variants);
    if (!copyTargeting && !copyConfig) {
      const value = { targetingVersion: target.targeting.version, configVersion: target.config.version, flagStateVersion: to.flagStateVersion, changed: false, wrote: [] };
      return { ok: true, value, audit: null };
    }
    const prepared = copyTargeting ? prepareTargeting(savedRules, segmentLookup(context, to.appId)) : undefined;
    if (prepared && !prepared.ok) return refused("INVALID_RULES", prepared.message);
    const link = historyLink(context, change);
    let state = target;
    if (prepared) state = features.writeRules(to.id, feature.key, "targeting", prepared.served, change.at, link, prepared.segmentRules, false)!.state;
    if (copyConfig) state = features.writeRules(to.id, feature.key, "config", source.config.variants, change.at, link, undefined, false)!.state;
    const flagStateVersion = tenancy.bumpFlagStateVersions([to.id]).get(to.id)!;
    const wrote: ("targeting" | "config")[] = [...(copyTargeting ? ["targeting" as const] : []), ...(copyConfig ? ["config" as const] : [])];
    return {
      ok: true,
      value: { targetingVersion: state.targeting.version, configVersion: state.config.version, flagStateVersion, changed: true, wrote },
      audit: {
        action: "feature.promote",
        entity: { kind: "feature", id: feature.id, key: feature.key, environmentId: to.id, appId: to.appId },
        details: {
          from: { environmentId: from.id, name: from.name, targetingVersion: source.targeting.version, configVersion: source.config.version },
          to: { environmentId: to.id, name: to.name, targetingVersion: state.targeting.version, configVersion: state.config.version },
          wrote,
          flagStateVersion,
        },
      },
      effects: { flagStates: [[to.id, flagStateVersion]] },
    };
  },
};
