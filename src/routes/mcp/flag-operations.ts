/**
 * What the MCP tools do, as plain operations over the services. Writes are the management API's own: the same
 * validation (FeatureKey, validateTargeting), the same changes through the management log (so a new targeting
 * version with history, the flags-updated push to SDKs and one audit entry with the caller as actor), answered with
 * what apply returned. Failures are ServiceErrors; the MCP server turns them into `isError` tool results.
 */
import { AnalyticsQueries } from "../../analytics/queries.js";
import { getAnalyticsSettings } from "../../analytics/settings.js";
import { resolveWindow } from "../../analytics/window.js";
import type { RouteContext } from "../core/route.js";
import { ServiceError } from "../../errors/catalogue.js";
import type { FeatureRecord } from "../../features/feature-records.js";
import { submitChange } from "../core/submit.js";
import { validateTargeting } from "../../schemas/rules.js";
import type { Services } from "../core/services.js";
import { newFeatureId } from "../../tenancy/identifiers.js";
import type { AppRecord, EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { PolicyRepository } from "../../management/governance/policy.js";
import { proposeTargeting } from "./change-request-operations.js";
import { appOrError, environmentOrError } from "./lookups.js";
import { staleFlags } from "./stale-flags.js";
import type { SetFlagTargeting } from "./tool-inputs.js";

type Context = RouteContext<Services>;

/** At most this many feedback entries come back from list_feedback, newest first. */
export const FEEDBACK_LIMIT = 100;

function flagOrError(context: Context, app: AppRecord, key: string): FeatureRecord {
  const feature = context.services.features.getFeature(app.id, key);
  if (!feature) throw new ServiceError("NOT_FOUND", `key: no flag ${key} in app ${app.id}; list_flags gives the keys.`, [{ path: "key", message: "no such flag" }]);
  return feature;
}

function environmentsOf(context: Context, app: AppRecord): EnvironmentRecord[] {
  return app.environmentIds.flatMap((id) => context.services.tenancy.getEnvironment(id) ?? []);
}

/** A flag as the tools show it; features made before names existed show their key as name. */
function presentFlag(feature: FeatureRecord) {
  return { key: feature.key, id: feature.id, name: feature.name ?? feature.key, description: feature.description, stage: feature.stage, createdAt: feature.createdAt };
}

export function listApps(context: Context) {
  const apps = context.services.tenancy.listApps().map((app) => ({
    id: app.id,
    name: app.name,
    environments: environmentsOf(context, app).map((environment) => ({
      id: environment.id,
      name: environment.name,
      // The default environment is where the tracking key writes: the app's live one.
      isProduction: environment.id === app.defaultEnvironmentId,
    })),
  }));
  return { apps };
}

export function listFlags(context: Context, appId: string) {
  const app = appOrError(context, appId);
  // Worker threads commit feature events; renew this thread's snapshot so staleness sees them.
  context.services.store.refresh();
  const features = context.services.features.listFeatures(app.id);
  const stale = staleFlags(context.services.store, context.services.features, environmentsOf(context, app), features, Date.now());
  return {
    flags: features.map((feature) => {
      const { id: _id, ...flag } = presentFlag(feature);
      const verdict = stale.get(feature.key)!;
      return { ...flag, stale: verdict.stale, staleReason: verdict.reason };
    }),
  };
}

export function getFlag(context: Context, appId: string, key: string) {
  const app = appOrError(context, appId);
  const feature = flagOrError(context, app, key);
  const { id: _id, createdAt: _createdAt, ...flag } = presentFlag(feature);
  const environments = environmentsOf(context, app).map((environment) => {
    const state = context.services.features.rulesOf(environment.id, feature.key);
    // `enabled`: the kill switch; while false the rules are kept but nobody gets the flag.
    return { id: environment.id, name: environment.name, version: state.targeting.version, rules: state.targeting.rules, enabled: state.enabled !== false };
  });
  return { flag: { ...flag, environments } };
}

export async function createFlag(context: Context, input: { appId: string; key: string; name?: string; description?: string }) {
  const app = appOrError(context, input.appId);
  if (context.services.features.getFeature(app.id, input.key)) {
    throw new ServiceError("CONFLICT", `key: flag ${input.key} already exists in app ${app.id}; use set_flag_targeting to change it.`, [{ path: "key", message: "already exists" }]);
  }
  const fields = { name: input.name ?? input.key, ...(input.description !== undefined ? { description: input.description } : {}) };
  const { feature } = await submitChange(context, "feature.put", { appId: app.id, featureKey: input.key, featureId: newFeatureId(), fields });
  return { flag: presentFlag(feature) };
}

/** The rule list a set_flag_targeting call asks for (API.md §12): everyone, nobody, allow-lists, or rules as given. */
export function targetingRulesOf(input: SetFlagTargeting): unknown[] {
  const lists = input.companyIds !== undefined || input.userIds !== undefined;
  const given = [input.enabled !== undefined, lists, input.rules !== undefined].filter(Boolean).length;
  if (given === 0) {
    throw new ServiceError("INVALID_BODY", "Give one of: enabled, companyIds/userIds, rules.", [{ path: "enabled", message: "give enabled, companyIds, userIds or rules" }]);
  }
  if (given > 1) {
    const path = input.enabled !== undefined ? "enabled" : "rules";
    throw new ServiceError("INVALID_BODY", "enabled, companyIds/userIds and rules each replace the whole targeting: give only one of them.", [
      { path, message: "cannot be combined with the other targeting fields" },
    ]);
  }
  if (input.rules !== undefined) return input.rules;
  if (input.enabled !== undefined) return input.enabled ? [{ filter: { type: "constant", value: true } }] : [];
  const rules: unknown[] = [];
  if (input.companyIds) rules.push({ filter: { type: "context", field: "company.id", operator: "ANY_OF", values: input.companyIds } });
  if (input.userIds) rules.push({ filter: { type: "context", field: "user.id", operator: "ANY_OF", values: input.userIds } });
  return rules;
}

export async function setFlagTargeting(context: Context, input: SetFlagTargeting) {
  const app = appOrError(context, input.appId);
  const environment = environmentOrError(context, app, input.environmentId);
  flagOrError(context, app, input.key);
  const rules = targetingRulesOf(input);
  const validated = validateTargeting({ rules });
  if (!validated.ok) throw new ServiceError("INVALID_RULES", undefined, validated.issues);
  // Where a person must approve, the agent's write becomes a proposal, never a refusal it cannot act on.
  if (new PolicyRepository(context.services.store).policyOf(environment).requireApproval) return proposeTargeting(context, environment, input, rules);
  const saved = await submitChange(context, "rules.put", { environmentId: environment.id, featureKey: input.key, kind: "targeting", list: rules });
  return { version: saved.state.targeting.version, flagStateVersion: saved.flagStateVersion, rules: saved.state.targeting.rules };
}

export function flagUsage(context: Context, input: { appId: string; key: string; environmentId: string }) {
  const app = appOrError(context, input.appId);
  const environment = environmentOrError(context, app, input.environmentId);
  const feature = flagOrError(context, app, input.key);
  context.services.store.refresh();
  const window = resolveWindow(null, null, Date.now());
  const { retentionDays } = getAnalyticsSettings(context.services.store, environment.id);
  const [summary] = new AnalyticsQueries(context.services.store).featureSummaries(environment.id, [feature], window, retentionDays);
  return { from: new Date(window.from).toISOString(), to: new Date(window.to).toISOString(), ...summary! };
}

export function listFeedback(context: Context, input: { appId: string; environmentId: string; key?: string }) {
  const app = appOrError(context, input.appId);
  const environment = environmentOrError(context, app, input.environmentId);
  if (input.key !== undefined) flagOrError(context, app, input.key);
  context.services.store.refresh();
  // The log pages oldest first; keep the last FEEDBACK_LIMIT that match, then turn them around.
  const kept: Record<string, unknown>[] = [];
  let after: string | undefined;
  for (;;) {
    const page = context.services.tracking.listFeedback(environment.id, after, 1000);
    for (const item of page.feedback) {
      if (input.key !== undefined && item.key !== input.key) continue;
      kept.push(item as unknown as Record<string, unknown>);
      if (kept.length > FEEDBACK_LIMIT) kept.shift();
    }
    if (page.feedback.length === 0 || page.next === after) break;
    after = page.next;
  }
  return { feedback: kept.reverse() };
}
