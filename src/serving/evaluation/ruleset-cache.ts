import { compileRuleset, type CompiledRuleset, type FeatureDefinition } from "../../evaluation/index.js";
import type { FeatureRepository } from "../../features/feature-repository.js";
import { displayName, isSwitchedOn } from "../../features/feature-records.js";
import { servedRulesOf } from "../../features/served-rules.js";
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
    const listed = this.features.listEnvironmentFeatures(environment);
    // The kill switch and the prerequisites are compiled in, exactly as GET /features serves them.
    const served = servedRulesOf(listed.map(({ feature, state }) => ({ key: feature.key, state })));
    const definitions: FeatureDefinition[] = listed.map(({ feature, state }) => ({
      key: feature.key,
      stage: feature.stage,
      targeting: { version: state.targeting.version, rules: served.get(feature.key)! } as FeatureDefinition["targeting"],
      config: state.config as FeatureDefinition["config"],
      // Switched off means off for everyone: an opt-in does not beat the switch (nor is it offered meanwhile).
      ...(feature.optInEnabled && isSwitchedOn(state) ? { optIn: { name: displayName(feature), description: feature.description } } : {}),
      ...(isSwitchedOn(state) ? {} : { switchedOff: true }),
    }));
    const ruleset = compileRuleset(definitions);
    const allowsOptIn = definitions.some((definition) => definition.optIn !== undefined);
    const current: CurrentRuleset = { version: environment.flagStateVersion, ruleset, allowsOptIn };
    this.compiled.set(environmentId, current);
    return current;
  }
}
