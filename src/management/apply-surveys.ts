/** Appliers for feedback survey rules (API.md "Automated feedback surveys"). */
import { getSurveyRule, removeSurveyRule, writeSurveyRule, type SurveyRule } from "../surveys/survey-rules.js";
import type { Appliers } from "./apply-context.js";
import { refused } from "./outcome.js";

type SurveyAppliers = Pick<Appliers, "survey.put" | "survey.remove">;

export const SURVEY_APPLIERS: SurveyAppliers = {
  "survey.put"({ store, tenancy, features }, change) {
    const environment = tenancy.getEnvironment(change.environmentId);
    if (!environment) return refused("NOT_FOUND", `No environment ${change.environmentId}.`);
    const feature = features.getFeature(environment.appId, change.featureKey);
    if (!feature) return refused("NOT_FOUND", `No feature ${change.featureKey}.`);
    const before = getSurveyRule(store, environment.id, feature.key) ?? null;
    const rule: SurveyRule = { featureKey: feature.key, ...change.settings, updatedAt: change.at };
    writeSurveyRule(store, environment.id, rule);
    return {
      ok: true,
      value: { survey: rule, created: before === null },
      audit: {
        action: before ? "survey.update" : "survey.create",
        entity: { kind: "survey", id: feature.id, key: feature.key, environmentId: environment.id, appId: environment.appId },
        details: { from: before, to: rule },
      },
    };
  },

  "survey.remove"({ store, tenancy }, change) {
    const environment = tenancy.getEnvironment(change.environmentId);
    if (!environment) return refused("NOT_FOUND", `No environment ${change.environmentId}.`);
    const removed = removeSurveyRule(store, environment.id, change.featureKey);
    if (!removed) return refused("NOT_FOUND", `No survey for feature ${change.featureKey}.`);
    return {
      ok: true,
      value: { survey: removed },
      audit: {
        action: "survey.remove",
        entity: { kind: "survey", id: change.featureKey, key: change.featureKey, environmentId: environment.id, appId: environment.appId },
        details: { removed },
      },
    };
  },
};
