/** A feature's release stage as the Reflag CLI shows it. */
import type { FeatureRecord } from "../features/records.js";
import type { Services } from "../services.js";
import type { ReflagStage } from "./present.js";

export function stageOf(_services: Services, _appId: string, feature: FeatureRecord): ReflagStage | null {
  return feature.stage === null ? null : { id: feature.stage, name: feature.stage, order: 0 };
}
