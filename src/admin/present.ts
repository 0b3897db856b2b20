import { displayName, type FeatureRecord } from "../features/records.js";
import type { AppRecord, EnvironmentRecord } from "../tenancy/records.js";

/** An app as listed after creation: keys masked, never in clear. */
export function presentApp(app: AppRecord, environments: EnvironmentRecord[]) {
  return {
    id: app.id,
    name: app.name,
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
    createdAt: feature.createdAt,
    optInEnabled: feature.optInEnabled,
    usageEvents: feature.usageEvents,
  };
}
