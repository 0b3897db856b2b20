import { compileRuleset, type CompiledRuleset, type FeatureDefinition } from "../../evaluation/index.js";
import type { FeatureRepository } from "../../features/feature-repository.js";
import { displayName, isSwitchedOn, servedTargetingRules } from "../../features/feature-records.js";
import type { KvStore } from "../../storage/kv.js";
import type { TenancyRepository } from "../../tenancy/tenancy-repository.js";

export interface CurrentRuleset {
  /** The environment's flagStateVersion this ruleset was compiled at. */
  version: number;
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
  private readonly compiled = new Map<string, CurrentRuleset>();

  constructor(
    private readonly store: KvStore,
    private readonly tenancy: TenancyRepository,
    private readonly features: FeatureRepository,
  ) {}

  get(environmentId: string, minFlagStateVersion: number): CurrentRuleset | undefined {
    const cached = this.compiled.get(environmentId);
    // The caller's version is the newest this process knows of; a ruleset that recent needs no store read at all.
    if (cached && cached.version >= minFlagStateVersion) return cached;
    let environment = this.tenancy.getEnvironment(environmentId);
    if (!environment || environment.flagStateVersion < minFlagStateVersion) {
      this.store.refresh();
      environment = this.tenancy.getEnvironment(environmentId);
    }
    if (!environment) return undefined;
    if (cached && cached.version === environment.flagStateVersion) return cached;
    const definitions: FeatureDefinition[] = this.features.listEnvironmentFeatures(environment).map(({ feature, state }) => ({
      key: feature.key,
      stage: feature.stage,
      // The kill switch is compiled in: a feature switched off has no rule to match.
      targeting: { version: state.targeting.version, rules: servedTargetingRules(state) } as FeatureDefinition["targeting"],
      config: state.config as FeatureDefinition["config"],
      ...(feature.optInEnabled ? { optIn: { name: displayName(feature), description: feature.description } } : {}),
      ...(isSwitchedOn(state) ? {} : { switchedOff: true }),
    }));
    const ruleset = compileRuleset(definitions);
    const allowsOptIn = definitions.some((definition) => definition.optIn !== undefined);
    const current: CurrentRuleset = { version: environment.flagStateVersion, ruleset, allowsOptIn };
    this.compiled.set(environmentId, current);
    return current;
  }
}
