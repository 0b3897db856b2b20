/**
 * Before any timing: do the three servers serve the same rules? Answers for a sample of contexts are compared.
 *
 * - Unleash's `/api/frontend` and the proxy's `/proxy` run the same evaluator on the same features: their enabled
 *   flags and variant names must be identical for every context.
 * - Switchyard against Unleash: a flag the importer mapped exactly must have the same `isEnabled` for every context,
 *   and a variant exactly where Unleash gives one. A flag the importer warned about as rehashed (a rollout or variant
 *   split keeps its share, other users) is compared by its share of enabled contexts over the sample, within four
 *   standard deviations of the difference of two such shares; variant names must be among the flag's.
 */
import { PEER_FEATURES, peerFeatureKey, VARIANT_NAMES, type PeerContext } from "./flag-set.js";

/** What one server answered for one context: flag key → variant name (undefined: enabled without a variant). */
export type EnabledFlags = Map<string, string | undefined>;

export interface AgreementReport {
  contexts: number;
  /** Flag × context pairs compared exactly (all flags between the Unleash servers; the exactly mapped ones with Switchyard). */
  exactComparisons: number;
  /** Flags compared by share (rehashed by the import). */
  sharedFlags: number;
  /** Flags enabled per context on average, by each server: a comparison where nothing is on would prove nothing. */
  enabledPerContext: { switchyard: number; unleash: number; proxy: number };
  disagreements: string[];
}

/** Unleash's and the proxy's answer: `{toggles: [{name, enabled, variant: {name, enabled}}]}`, enabled toggles only. */
export function fromUnleashAnswer(body: unknown): EnabledFlags {
  const toggles = (body as { toggles?: { name: string; enabled: boolean; variant?: { name: string; enabled: boolean } }[] }).toggles;
  if (!Array.isArray(toggles)) throw new Error(`not an Unleash frontend answer: ${JSON.stringify(body).slice(0, 200)}`);
  return new Map(toggles.filter((toggle) => toggle.enabled).map((toggle) => [toggle.name, toggle.variant?.enabled ? toggle.variant.name : undefined]));
}

/** Switchyard's `/features/evaluated` answer: every feature with `isEnabled` and its first matching variant. */
export function fromSwitchyardAnswer(body: unknown): EnabledFlags {
  const features = (body as { features?: Record<string, { isEnabled: boolean; config?: { key: string | null } }> }).features;
  if (features === undefined || typeof features !== "object") throw new Error(`not a /features/evaluated answer: ${JSON.stringify(body).slice(0, 200)}`);
  return new Map(
    Object.entries(features)
      .filter(([, feature]) => feature.isEnabled)
      .map(([key, feature]) => [key, feature.config?.key ?? undefined]),
  );
}

export interface SampledAnswers {
  context: PeerContext;
  switchyard: EnabledFlags;
  unleash: EnabledFlags;
  proxy: EnabledFlags;
}

/** Compares the answers; `rehashed` are the flags the import warned ROLLOUT_REHASHED about. */
export function compareAnswers(samples: readonly SampledAnswers[], rehashed: ReadonlySet<string>): AgreementReport {
  const disagreements: string[] = [];
  let exactComparisons = 0;
  const note = (text: string) => {
    if (disagreements.length < 20) disagreements.push(text);
  };
  const keys = Array.from({ length: PEER_FEATURES }, (_, index) => peerFeatureKey(index));
  const shares = new Map(keys.map((key) => [key, { switchyard: 0, unleash: 0 }]));
  for (const sample of samples) {
    const who = `user ${sample.context.userId} of ${sample.context.companyId}`;
    for (const key of keys) {
      const unleash = sample.unleash.has(key);
      if (unleash !== sample.proxy.has(key) || sample.unleash.get(key) !== sample.proxy.get(key)) {
        note(`${key} for ${who}: Unleash ${describe(sample.unleash, key)}, the proxy ${describe(sample.proxy, key)}`);
      }
      exactComparisons++;
      const ours = sample.switchyard.has(key);
      const ourVariant = sample.switchyard.get(key);
      if (ourVariant !== undefined && !VARIANT_NAMES.includes(ourVariant)) note(`${key} for ${who}: Switchyard's variant ${ourVariant} is not one of Unleash's`);
      const share = shares.get(key)!;
      if (ours) share.switchyard++;
      if (unleash) share.unleash++;
      if (rehashed.has(key)) continue;
      exactComparisons++;
      if (ours !== unleash) note(`${key} for ${who}: Switchyard ${describe(sample.switchyard, key)}, Unleash ${describe(sample.unleash, key)}`);
      else if (ours && (ourVariant === undefined) !== (sample.unleash.get(key) === undefined)) {
        note(`${key} for ${who}: variant ${ourVariant ?? "none"} here, ${sample.unleash.get(key) ?? "none"} in Unleash`);
      }
    }
  }
  const n = samples.length;
  const enabled = (pick: (sample: SampledAnswers) => EnabledFlags) => (n === 0 ? 0 : samples.reduce((sum, sample) => sum + pick(sample).size, 0) / n);
  const enabledPerContext = { switchyard: enabled((sample) => sample.switchyard), unleash: enabled((sample) => sample.unleash), proxy: enabled((sample) => sample.proxy) };
  if (n > 0 && enabledPerContext.unleash === 0) note("Unleash enabled no flag for any context of the sample: the comparison would prove nothing");
  for (const key of rehashed) {
    const share = shares.get(key);
    if (share === undefined || n === 0) continue;
    const ours = share.switchyard / n;
    const theirs = share.unleash / n;
    const pooled = (ours + theirs) / 2;
    // Four standard deviations of the difference of two independent shares, and never under 5 points.
    const tolerance = Math.max(0.05, 4 * Math.sqrt((2 * pooled * (1 - pooled)) / n));
    if (Math.abs(ours - theirs) > tolerance) {
      note(`${key}: enabled for ${(ours * 100).toFixed(1)} % of the sample here, ${(theirs * 100).toFixed(1)} % in Unleash (tolerance ±${(tolerance * 100).toFixed(1)} points)`);
    }
  }
  return { contexts: n, exactComparisons, sharedFlags: rehashed.size, enabledPerContext, disagreements };
}

function describe(flags: EnabledFlags, key: string): string {
  if (!flags.has(key)) return "off";
  const variant = flags.get(key);
  return variant === undefined ? "on" : `on (${variant})`;
}
