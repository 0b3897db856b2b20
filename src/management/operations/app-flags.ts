/**
 * An app's flags as the `switchyard.flags/v1` document speaks of them: environments, segments and stages by name,
 * segment references by name. Export writes this view; an import plan compares a document with it.
 */
import type { FeatureRepository } from "../../features/feature-repository.js";
import { prerequisitesOf, type FeatureRecord } from "../../features/feature-records.js";
import type { SegmentRepository } from "../segments/segment-repository.js";
import type { SegmentRecord } from "../segments/segment-records.js";
import type { StageRepository } from "../../features/stage-repository.js";
import type { StageRecord } from "../../features/stage-records.js";
import type { TenancyRepository } from "../../tenancy/tenancy-repository.js";
import type { AppRecord, EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { FLAGS_FORMAT, mapSegmentRefs } from "./flags-document.js";

/** The repositories a reader of an app's flags needs: the management apply context has them all. */
export interface FlagRepositories {
  tenancy: TenancyRepository;
  features: FeatureRepository;
  segments: SegmentRepository;
  stages: StageRepository;
}

export interface AppFlags {
  app: AppRecord;
  environments: EnvironmentRecord[];
  /** Environment names that appear more than once: such an app cannot be exported or imported into by name. */
  repeatedNames: string[];
  segments: SegmentRecord[];
  stages: StageRecord[];
  features: FeatureRecord[];
}

export function readAppFlags(repositories: FlagRepositories, app: AppRecord): AppFlags {
  const environments = app.environmentIds.flatMap((id) => repositories.tenancy.getEnvironment(id) ?? []);
  const seen = new Set<string>();
  const repeatedNames = new Set<string>();
  for (const environment of environments) (seen.has(environment.name) ? repeatedNames : seen).add(environment.name);
  return {
    app,
    environments,
    repeatedNames: [...repeatedNames],
    segments: repositories.segments.listSegments(app.id),
    stages: repositories.stages.listStages(app.id) ?? [],
    features: repositories.features.listFeatures(app.id).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
  };
}

/** Segment references by id (as stored) rewritten by name (as in documents); an unknown id is kept as it is. */
export function byName(tree: unknown, segments: readonly SegmentRecord[]): unknown {
  const names = new Map(segments.map((segment) => [segment.id, segment.name]));
  return mapSegmentRefs(tree, (node) => {
    const { segmentId, ...rest } = node;
    return { ...rest, segment: names.get(String(segmentId)) ?? segmentId };
  });
}

/** Segment references by name rewritten by id, through `ids` (name → id). */
export function byId(tree: unknown, ids: ReadonlyMap<string, string>): unknown {
  return mapSegmentRefs(tree, (node) => {
    const { segment, ...rest } = node;
    return { ...rest, segmentId: ids.get(String(segment)) ?? segment };
  });
}

/** A feature's rules in one environment as saved (segment references by name) and its variants. */
export function savedRules(repositories: FlagRepositories, flags: AppFlags, environmentId: string, featureKey: string): { rules: unknown[]; variants: unknown[] } {
  const state = repositories.features.rulesOf(environmentId, featureKey);
  return { rules: byName(state.targeting.segmentRules ?? state.targeting.rules, flags.segments) as unknown[], variants: state.config.variants };
}

/** A feature's entry for one environment in a document: its rules and variants, and its prerequisites when it has any. */
function environmentEntry(repositories: FlagRepositories, flags: AppFlags, environmentId: string, featureKey: string) {
  const prerequisites = prerequisitesOf(repositories.features.rulesOf(environmentId, featureKey));
  return { ...savedRules(repositories, flags, environmentId, featureKey), ...(prerequisites.length > 0 ? { prerequisites } : {}) };
}

/** The app's flags as a `switchyard.flags/v1` document (API.md §13.2). Throws nothing; the caller refuses repeated names. */
export function exportDocument(repositories: FlagRepositories, flags: AppFlags, exportedAt: string) {
  const environmentName = new Map(flags.environments.map((environment) => [environment.id, environment.name]));
  return {
    format: FLAGS_FORMAT,
    exportedAt,
    app: { id: flags.app.id, name: flags.app.name },
    environments: flags.environments.map((environment) => environment.name),
    segments: flags.segments.map((segment) => ({ name: segment.name, description: segment.description, filter: byName(segment.filter, flags.segments) })),
    stages: flags.stages.map((stage) => ({
      name: stage.name,
      order: stage.order,
      targeting: Object.fromEntries(
        flags.environments.filter((environment) => stage.targeting[environment.id] !== undefined).map((environment) => [environment.name, { rules: byName(stage.targeting[environment.id]!.rules, flags.segments) }]),
      ),
    })),
    features: flags.features.map((feature) => ({
      key: feature.key,
      name: feature.name ?? null,
      description: feature.description,
      link: feature.link,
      stage: feature.stage,
      optInEnabled: feature.optInEnabled,
      environments: Object.fromEntries(flags.environments.map((environment) => [environmentName.get(environment.id)!, environmentEntry(repositories, flags, environment.id, feature.key)])),
    })),
  };
}
