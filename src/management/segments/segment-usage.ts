/**
 * Who names a segment: other segments of the app, feature targeting (in any environment), stage targeting. The
 * management API lists it with each segment and refuses to delete a segment that anyone still names.
 */
import type { FeatureRepository } from "../../features/feature-repository.js";
import type { StageRepository } from "../../features/stage-repository.js";
import type { AppRecord } from "../../tenancy/tenancy-records.js";
import { segmentRefs } from "./inline.js";
import type { SegmentRepository } from "./segment-repository.js";

export interface SegmentUsage {
  /** Names of the app's segments whose filter names it. */
  segments: string[];
  /** Keys of the features whose saved targeting names it in at least one environment. */
  features: string[];
  /** Names of the release stages whose targeting names it. */
  stages: string[];
}

export interface UsageRepositories {
  segments: SegmentRepository;
  features: FeatureRepository;
  stages: StageRepository;
}

export function segmentUsage(repositories: UsageRepositories, app: Pick<AppRecord, "id" | "environmentIds">, segmentId: string): SegmentUsage {
  const segments = repositories.segments
    .listSegments(app.id)
    .filter((other) => other.id !== segmentId && segmentRefs(other.filter).has(segmentId))
    .map((other) => other.name);
  const features = repositories.features
    .listFeatures(app.id)
    .filter((feature) => app.environmentIds.some((environmentId) => segmentRefs(repositories.features.rulesOf(environmentId, feature.key).targeting.segmentRules ?? []).has(segmentId)))
    .map((feature) => feature.key);
  const stages = (repositories.stages.listStages(app.id) ?? []).filter((stage) => segmentRefs(stage.targeting).has(segmentId)).map((stage) => stage.name);
  return { segments, features, stages };
}

/** "segment a, feature b, stage c": empty when no one names it. */
export function describeUsage(usage: SegmentUsage): string[] {
  return [...usage.segments.map((name) => `segment ${name}`), ...usage.features.map((key) => `feature ${key}`), ...usage.stages.map((name) => `stage ${name}`)];
}
