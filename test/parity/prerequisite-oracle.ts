/**
 * Prerequisites in the parity suites (API.md §15): the definitions an environment serves once the kill switches and
 * prerequisites are compiled in — through the service's own `servedRulesOf`, the one path `GET /features` and the
 * server's evaluation share — and what prerequisites mean, computed independently of that compilation: a feature is on
 * only when its own rules match and every prerequisite's access is (or, `enabled: false`, is not) on.
 */
import type { FeatureDefinition } from "../../src/evaluation/index.js";
import type { EnvironmentFeatureState } from "../../src/features/feature-records.js";
import { servedRulesOf } from "../../src/features/served-rules.js";
import type { ReleaseSettings } from "./arbitraries.js";
import { compileReference, evaluateReference } from "./reference.js";

/** The environment's state of each feature, as the store would hold it. */
function statesOf(definitions: readonly FeatureDefinition[], settings: readonly ReleaseSettings[]) {
  return definitions.map((definition, index) => ({
    key: definition.key,
    state: {
      targeting: { version: definition.targeting.version, rules: definition.targeting.rules },
      config: { version: definition.config.version, variants: definition.config.variants },
      enabled: settings[index]!.switchedOn,
      prerequisites: settings[index]!.prerequisites,
    } as EnvironmentFeatureState,
  }));
}

/** The definitions as served: each feature's rules with its kill switch and prerequisites compiled in. */
export function servedDefinitions(definitions: readonly FeatureDefinition[], settings: readonly ReleaseSettings[]): FeatureDefinition[] {
  const served = servedRulesOf(statesOf(definitions, settings));
  return definitions.map((definition) => ({ ...definition, targeting: { ...definition.targeting, rules: served.get(definition.key) as FeatureDefinition["targeting"]["rules"] } }));
}

/** A reference ruleset over each feature's own rules: what the oracle reads "its own rules match" from. */
export function ownRulesReference(definitions: readonly FeatureDefinition[]) {
  return compileReference(definitions);
}

/** Which features are on for a context by the definition of prerequisites, from each feature's own rules. */
export function accessByDefinition(
  ownReference: ReturnType<typeof compileReference>,
  definitions: readonly FeatureDefinition[],
  settings: readonly ReleaseSettings[],
  context: Record<string, unknown>,
): Map<string, boolean> {
  const ownOn = new Map(evaluateReference(ownReference, context).map((item) => [item.key, item.isEnabled]));
  const indexOf = new Map(definitions.map((definition, index) => [definition.key, index]));
  const access = new Map<string, boolean>();
  const accessOf = (key: string): boolean => {
    const known = access.get(key);
    if (known !== undefined) return known;
    const index = indexOf.get(key)!;
    const { switchedOn, prerequisites } = settings[index]!;
    const on = switchedOn && ownOn.get(key) === true && prerequisites.every(({ feature, enabled }) => accessOf(feature) === enabled);
    access.set(key, on);
    return on;
  };
  for (const definition of definitions) accessOf(definition.key);
  return access;
}
