import { compileRuleset, type CompiledRuleset, type FeatureDefinition } from "../evaluation/index.js";
import type { FeatureRepository } from "../features/feature-repository.js";
import type { KvStore } from "../storage/kv.js";
import type { EnvironmentRecord } from "../tenancy/records.js";
import type { TenancyRepository } from "../tenancy/tenancy-repository.js";

export interface CurrentRuleset {
  environment: EnvironmentRecord;
  ruleset: CompiledRuleset;
  /** Whether any feature allows opt-in (only then are the context's opt-ins looked up). */
  allowsOptIn: boolean;
}

/**
 * Compiled rulesets per environment, recompiled when the environment's flagStateVersion moves. A caller that knows
 * a newer version than this thread's snapshot shows makes the store renew its snapshot first, so nothing stale is
 * served after an admin call has returned.
 */
export class RulesetCache {
  private readonly compiled = new Map<string, { version: number; ruleset: CompiledRuleset; allowsOptIn: boolean }>();

  constructor(
    private readonly store: KvStore,
    private readonly tenancy: TenancyRepository,
    private readonly features: FeatureRepository,
  ) {}

  get(environmentId: string, minFlagStateVersion: number): CurrentRuleset | undefined {
    let environment = this.tenancy.getEnvironment(environmentId);
    if (!environment || environment.flagStateVersion < minFlagStateVersion) {
      this.store.refresh();
      environment = this.tenancy.getEnvironment(environmentId);
    }
    if (!environment) return undefined;
    const cached = this.compiled.get(environmentId);
    if (cached && cached.version === environment.flagStateVersion) return { environment, ruleset: cached.ruleset, allowsOptIn: cached.allowsOptIn };
    const definitions: FeatureDefinition[] = this.features.listEnvironmentFeatures(environment).map(({ feature, state }) => ({
      key: feature.key,
      stage: feature.stage,
      targeting: state.targeting as FeatureDefinition["targeting"],
      config: state.config as FeatureDefinition["config"],
      ...(feature.optInEnabled ? { optIn: { description: feature.description } } : {}),
    }));
    const ruleset = compileRuleset(definitions);
    const allowsOptIn = definitions.some((definition) => definition.optIn !== undefined);
    this.compiled.set(environmentId, { version: environment.flagStateVersion, ruleset, allowsOptIn });
    return { environment, ruleset, allowsOptIn };
  }
}
