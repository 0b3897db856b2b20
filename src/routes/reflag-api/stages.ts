/** A feature's release stage as the Reflag CLI shows it: `{id, name, order}` of the app's stage, or null. */
import type { FeatureRecord } from "../../features/feature-records.js";
import type { Services } from "../core/services.js";
import { StageRepository } from "../../features/stage-repository.js";
import type { ReflagStage } from "./present.js";

export function stageOf(services: Services, appId: string, feature: FeatureRecord): ReflagStage | null {
  if (feature.stage === null) return null;
  const stages = new StageRepository(services.store);
  const stage = (feature.stageId ? stages.getStage(appId, feature.stageId) : undefined) ?? stages.findStage(appId, feature.stage);
  // A stage written as a free label (§6 `stage`) that names no app stage has no order of its own.
  return stage ? { id: stage.id, name: stage.name, order: stage.order } : { id: feature.stage, name: feature.stage, order: 0 };
}
