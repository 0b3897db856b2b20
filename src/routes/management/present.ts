import { displayName, type FeatureRecord } from "../../features/feature-records.js";
import type { AppRecord, EnvironmentRecord } from "../../tenancy/tenancy-records.js";

/** An app as listed after creation: keys masked, never in clear. */
export function presentApp(app: AppRecord, environments: EnvironmentRecord[]) {
  return {
    id: app.id,
    name: app.name,
    ...(app.region !== undefined ? { region: app.region } : {}),
    trackingKey: app.trackingKeyHint,
    defaultEnvironmentId: app.defaultEnvironmentId,
    createdAt: app.createdAt,
    environments: environments.map((environment) => ({
      id: environment.id,
      name: environment.name,
      publishableKey: environment.publishableKeyHint,
      secretKey: environment.secretKeyHint,
      flagStateVersion: environment.flagStateVersion,
    })),
  };
}

export function presentFeature(feature: FeatureRecord) {
  return {
    key: feature.key,
    id: feature.id,
    name: displayName(feature),
    description: feature.description,
    link: feature.link,
    stage: feature.stage,
    /** The release stage the feature is in (API.md §10), null when `stage` is only a label or unset. */
    stageId: feature.stageId ?? null,
    createdAt: feature.createdAt,
    optInEnabled: feature.optInEnabled,
    usageEvents: feature.usageEvents,
  };
}
