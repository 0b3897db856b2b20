import { key, prefixRange, sequenceKeyPart, type KvStore } from "../storage/kv.js";
import { newFeatureId } from "../tenancy/identifiers.js";
import type { EnvironmentRecord } from "../tenancy/tenancy-records.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { UNTARGETED, type EnvironmentFeatureState, type FeatureRecord, type HistoryEntry, type HistoryLink, type Prerequisite } from "./feature-records.js";

export interface FeatureChanges {
  name?: string | null;
  description?: string | null;
  link?: string | null;
  stage?: string | null;
  /** The release stage `stage` names (API.md §10); null or absent: `stage` is a label of no stage. */
  stageId?: string | null;
  optInEnabled?: boolean;
  usageEvents?: string[];
}

/** What a feature write did: the feature now, as it was before (undefined for a new one), and the bumped flagStateVersions. */
export interface FeatureWrite {
  feature: FeatureRecord;
  previous: FeatureRecord | undefined;
  flagStates: Map<string, number>;
}

/** One targeting or config write, as it changed the list: what a change's webhook events report. */
export interface RulesWrite {
  environmentId: string;
  featureKey: string;
  kind: "targeting" | "config";
  fromVersion: number;
  toVersion: number;
  /** The lists as saved (targeting: with its segment references, when it has them). */
  before: unknown[];
  after: unknown[];
}

/** A live feature with its rules in one environment: what evaluation and `GET /features` need. */
export interface EnvironmentFeature {
  feature: FeatureRecord;
  state: EnvironmentFeatureState;
}

/**
 * Features (per app) and their targeting/config (per environment), with every version kept. Every change bumps
 * the `flagStateVersion` of each environment it shows in, in the same transaction. The service changes them through
 * `src/management/`; the one-transaction conveniences (`putFeature`…) serve tests and tools.
 */
export class FeatureRepository {
  private readonly tenancy: TenancyRepository;
  /** Told of every rules write while a change is applied (`recordRulesWrites`). */
  private rulesWrites: RulesWrite[] | undefined;

  constructor(private readonly store: KvStore) {
    this.tenancy = new TenancyRepository(store);
  }

  /**
   * Runs `apply` (synchronously, inside a write transaction) and returns its result with every targeting and config
   * write it made, whichever applier made them (a rules write, a stage, a change request, an import, a segment).
   */
  recordRulesWrites<T>(apply: () => T): { result: T; writes: RulesWrite[] } {
    const writes: RulesWrite[] = [];
    this.rulesWrites = writes;
    try {
      return { result: apply(), writes };
    } finally {
      this.rulesWrites = undefined;
    }
  }

  private get features() {
    return this.store.table<"features", FeatureRecord>("features");
  }
  private get featureIds() {
    return this.store.table<"features", string>("features");
  }
  private get states() {
    return this.store.table("targeting");
  }
  private get history() {
    return this.store.table("history");
  }

  getFeature(appId: string, featureKey: string): FeatureRecord | undefined {
    const feature = this.features.get(key(appId, "key", featureKey));
    return feature && !feature.archivedAt ? feature : undefined;
  }

  getFeatureById(appId: string, featureId: string): FeatureRecord | undefined {
    const featureKey = this.featureIds.get(key(appId, "id", featureId));
    return featureKey === undefined ? undefined : this.getFeature(appId, featureKey);
  }

  listFeatures(appId: string): FeatureRecord[] {
    const live: FeatureRecord[] = [];
    for (const { value } of this.features.range(prefixRange(appId, "key"))) if (!value.archivedAt) live.push(value);
    return live;
  }

  /** Every live feature of the environment's app with its rules there, in key order. */
  listEnvironmentFeatures(environment: EnvironmentRecord): EnvironmentFeature[] {
    return this.listFeatures(environment.appId).map((feature) => ({
      feature,
      state: this.states.get(key(environment.id, feature.key)) ?? UNTARGETED,
    }));
  }

  /** Creates or updates a feature in one transaction (tests and tools; the service goes through src/management). */
  async putFeature(appId: string, featureKey: string, changes: FeatureChanges, now = new Date()): Promise<FeatureRecord | undefined> {
    return this.store.write(() => this.writeFeature(appId, featureKey, changes, newFeatureId(), now.toISOString())?.feature);
  }

  /** Archives a feature in one transaction (tests and tools). False when there was none. */
  async archiveFeature(appId: string, featureKey: string, now = new Date()): Promise<boolean> {
    return this.store.write(() => this.removeFeature(appId, featureKey, now.toISOString()) !== undefined);
  }

  /** Replaces a feature's targeting or config in one environment in one transaction (tests and tools). */
  async putRules(
    environmentId: string,
    featureKey: string,
    kind: "targeting" | "config",
    list: unknown[],
    now = new Date(),
  ): Promise<{ state: EnvironmentFeatureState; flagStateVersion: number } | undefined> {
    return this.store.write(() => this.writeRules(environmentId, featureKey, kind, list, now.toISOString()));
  }

  // Writes below run inside a transaction: the management apply path's, or one of the conveniences above.

  /**
   * Creates or updates a feature; an archived one with the same key comes back to life as `newId`. Undefined when the
   * app does not exist. Bumps the flagStateVersion of every environment of the app.
   */
  writeFeature(appId: string, featureKey: string, changes: FeatureChanges, newId: string, at: string, actor?: HistoryLink["actor"]): FeatureWrite | undefined {
    const app = this.tenancy.getApp(appId);
    if (!app) return undefined;
    const existing = this.features.get(key(appId, "key", featureKey));
    const previous = existing && !existing.archivedAt ? existing : undefined;
    const base: FeatureRecord = previous ?? {
      id: newId,
      key: featureKey,
      name: null,
      description: null,
      link: null,
      stage: null,
      createdAt: at,
      optInEnabled: false,
      usageEvents: [],
      archivedAt: null,
    };
    const feature: FeatureRecord = { ...base, ...definedOnly(changes) };
    // A stage written by name puts the feature in that release stage; one without a stage id takes it out of any.
    if (changes.stage !== undefined) feature.stageId = changes.stageId ?? null;
    if (previous && fieldsDiffer(previous, feature)) feature.fieldsChanged = { at, actor: actor ?? null };
    this.features.put(key(appId, "key", featureKey), feature);
    this.featureIds.put(key(appId, "id", feature.id), featureKey);
    return { feature, previous, flagStates: this.tenancy.bumpFlagStateVersions(app.environmentIds) };
  }

  /**
   * Puts a live feature in a release stage (its label and id) without bumping any flagStateVersion: the caller
   * writes the stage's targeting next, which bumps each environment once. Undefined when there is no such feature.
   */
  writeStage(appId: string, featureKey: string, stageId: string | null, stageName: string | null, at: string, actor?: HistoryLink["actor"]): { feature: FeatureRecord; previous: FeatureRecord } | undefined {
    const previous = this.getFeature(appId, featureKey);
    if (!previous) return undefined;
    const feature: FeatureRecord = { ...previous, stage: stageName, stageId };
    if (fieldsDiffer(previous, feature)) feature.fieldsChanged = { at, actor: actor ?? null };
    this.features.put(key(appId, "key", featureKey), feature);
    return { feature, previous };
  }

  /** Archives a feature: it disappears from every environment's answers. Undefined when there was none. */
  removeFeature(appId: string, featureKey: string, at: string): FeatureWrite | undefined {
    const app = this.tenancy.getApp(appId);
    const existing = this.features.get(key(appId, "key", featureKey));
    if (!app || !existing || existing.archivedAt) return undefined;
    const feature = { ...existing, archivedAt: at };
    this.features.put(key(appId, "key", featureKey), feature);
    this.featureIds.remove(key(appId, "id", existing.id));
    for (const environmentId of app.environmentIds) this.states.remove(key(environmentId, featureKey));
    return { feature, previous: existing, flagStates: this.tenancy.bumpFlagStateVersions(app.environmentIds) };
  }

  /**
   * Replaces the targeting rules or config variants of a feature in one environment, keeping the new version in the
   * history (with the audit entry that made it, when given). `list` is what is served; `segmentRules`, the rules as
   * saved when they name segments. Undefined when the environment or feature does not exist.
   */
  writeRules(
    environmentId: string,
    featureKey: string,
    kind: "targeting" | "config",
    list: unknown[],
    at: string,
    link?: HistoryLink,
    segmentRules?: unknown[],
    /** False when the caller steps the environment's flagStateVersion once for several writes (a change request). */
    bumpFlagState = true,
  ): { state: EnvironmentFeatureState; flagStateVersion: number; feature: FeatureRecord } | undefined {
    const environment = this.tenancy.getEnvironment(environmentId);
    const feature = environment && this.getFeature(environment.appId, featureKey);
    if (!feature) return undefined;
    const current = this.states.get(key(environmentId, featureKey)) ?? UNTARGETED;
    const state: EnvironmentFeatureState =
      kind === "targeting"
        ? { ...current, targeting: { version: current.targeting.version + 1, rules: list, ...(segmentRules ? { segmentRules } : {}) } }
        : { ...current, config: { version: current.config.version + 1, variants: list } };
    const version = kind === "targeting" ? state.targeting.version : state.config.version;
    const entry: HistoryEntry =
      kind === "targeting" ? { kind, version, rules: list, ...(segmentRules ? { segmentRules } : {}), at, ...link } : { kind, version, variants: list, at, ...link };
    this.states.put(key(environmentId, featureKey), state);
    this.history.put(key(environmentId, featureKey, kind, sequenceKeyPart(version)), entry);
    if (this.rulesWrites) {
      const saved = (each: EnvironmentFeatureState) => (kind === "targeting" ? (each.targeting.segmentRules ?? each.targeting.rules) : each.config.variants);
      this.rulesWrites.push({ environmentId, featureKey, kind, fromVersion: version - 1, toVersion: version, before: saved(current), after: saved(state) });
    }
    const flagStateVersion = bumpFlagState ? this.tenancy.bumpFlagStateVersions([environmentId]).get(environmentId)! : environment.flagStateVersion;
    return { state, flagStateVersion, feature };
  }

  /**
   * Moves a feature's kill switch in one environment, keeping the move in the history. Undefined when the environment
   * or feature does not exist. `bumpFlagState` false: the caller steps flagStateVersion once for several writes.
   */
  writeEnabled(environmentId: string, featureKey: string, enabled: boolean, at: string, link?: HistoryLink, bumpFlagState = true): { state: EnvironmentFeatureState; version: number; flagStateVersion: number } | undefined {
    const environment = this.tenancy.getEnvironment(environmentId);
    const feature = environment && this.getFeature(environment.appId, featureKey);
    if (!feature) return undefined;
    const current = this.states.get(key(environmentId, featureKey)) ?? UNTARGETED;
    const version = (current.enabledVersion ?? 0) + 1;
    const state: EnvironmentFeatureState = { ...current, enabled, enabledVersion: version };
    this.states.put(key(environmentId, featureKey), state);
    this.history.put(key(environmentId, featureKey, "enabled", sequenceKeyPart(version)), { kind: "enabled", version, enabled, at, ...link });
    const flagStateVersion = bumpFlagState ? this.tenancy.bumpFlagStateVersions([environmentId]).get(environmentId)! : environment.flagStateVersion;
    return { state, version, flagStateVersion };
  }

  /**
   * Replaces a feature's prerequisites in one environment, keeping the list in the history. Undefined when the
   * environment or feature does not exist. The caller has checked the list (prerequisite-graph.ts); `bumpFlagState`
   * as writeEnabled's.
   */
  writePrerequisites(environmentId: string, featureKey: string, prerequisites: Prerequisite[], at: string, link?: HistoryLink, bumpFlagState = true): { state: EnvironmentFeatureState; version: number; flagStateVersion: number } | undefined {
    const environment = this.tenancy.getEnvironment(environmentId);
    const feature = environment && this.getFeature(environment.appId, featureKey);
    if (!feature) return undefined;
    const current = this.states.get(key(environmentId, featureKey)) ?? UNTARGETED;
    const version = (current.prerequisitesVersion ?? 0) + 1;
    const state: EnvironmentFeatureState = { ...current, prerequisites, prerequisitesVersion: version };
    this.states.put(key(environmentId, featureKey), state);
    this.history.put(key(environmentId, featureKey, "prerequisites", sequenceKeyPart(version)), { kind: "prerequisites", version, prerequisites, at, ...link });
    const flagStateVersion = bumpFlagState ? this.tenancy.bumpFlagStateVersions([environmentId]).get(environmentId)! : environment.flagStateVersion;
    return { state, version, flagStateVersion };
  }

  /** Every live feature's prerequisites in an environment of `appId`, for those that have any. */
  prerequisiteGraph(environmentId: string, appId: string): Map<string, Prerequisite[]> {
    const graph = new Map<string, Prerequisite[]>();
    for (const feature of this.listFeatures(appId)) {
      const prerequisites = this.states.get(key(environmentId, feature.key))?.prerequisites;
      if (prerequisites && prerequisites.length > 0) graph.set(feature.key, prerequisites);
    }
    return graph;
  }

  /** The current targeting and config of a feature in an environment (untargeted when never set). */
  rulesOf(environmentId: string, featureKey: string): EnvironmentFeatureState {
    return this.states.get(key(environmentId, featureKey)) ?? UNTARGETED;
  }

  /** Every saved version of a feature's targeting and config in an environment, oldest first per kind. */
  listHistory(environmentId: string, featureKey: string): HistoryEntry[] {
    return [...this.history.range(prefixRange(environmentId, featureKey))].map((entry) => entry.value);
  }
}

const TRACKED_FIELDS = ["name", "description", "link", "stage", "stageId", "optInEnabled", "usageEvents"] as const;

/** Whether a write changed what people set on the feature (not its id, key or archive state). */
function fieldsDiffer(before: FeatureRecord, after: FeatureRecord): boolean {
  return TRACKED_FIELDS.some((field) => JSON.stringify(before[field] ?? null) !== JSON.stringify(after[field] ?? null));
}

function definedOnly(changes: FeatureChanges): Partial<FeatureRecord> {
  const out: Partial<FeatureRecord> = {};
  for (const [name, value] of Object.entries(changes)) if (value !== undefined) (out as Record<string, unknown>)[name] = value;
  return out;
}
