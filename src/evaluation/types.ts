/** The public shapes of the evaluation core: what goes in (definitions, context) and what comes out. */
import type { Filter } from "../schemas/rules.js";

export type { ConfigVariants, Filter, TargetingRules } from "../schemas/rules.js";

/** A feature as stored for one environment: the input of `compileRuleset`. */
export interface FeatureDefinition {
  key: string;
  stage: string | null;
  targeting: { version: number; rules: { filter: Filter }[] };
  config: { version: number; variants: { filter: Filter; key: string; payload: unknown }[] };
  /** Present when the feature lets users and companies opt in: an opted-in one sees it on. */
  optIn?: { name?: string; description: string | null };
  /** True when the environment's kill switch holds the feature off (its targeting rules then come empty). */
  switchedOff?: boolean;
}

/** The `optIn` item of an evaluated feature, in the shape the Reflag browser SDK validates. */
export interface OptInItem {
  userOptedIn: boolean;
  companyOptedIn: boolean;
  isOptedIn: boolean;
  /** The feature's display name (its key when it has none). */
  name: string;
  description: string | null;
}

/** The remote config part of an evaluated feature, shaped like the hosted service's answer. */
export interface EvaluatedConfig {
  /** The first matching variant's key, or null when no variant matched. */
  key: string | null;
  /** The matching variant's payload (null when none matched or it has none). */
  payload: unknown;
  version: number;
  /** The config's version again: the Node SDK reads the config version under this name. */
  targetingVersion: number;
  /** True when no variant matched. */
  default: boolean;
  ruleEvaluationResults: boolean[];
  missingContextFields: string[];
}

/** One feature's evaluation, in the shape of an item of the `features` map of `/features/evaluated`. */
export interface EvaluatedFeature {
  key: string;
  isEnabled: boolean;
  targetingVersion: number;
  stage: string | null;
  ruleEvaluationResults: boolean[];
  missingContextFields: string[];
  config: EvaluatedConfig;
  /** Only on features that allow opt-in. */
  optInEnabled?: true;
  optIn?: OptInItem;
}

/** Options of evaluateRuleset. */
export interface EvaluateOptions {
  /** Evaluate only the feature with this key (none when there is no such feature). */
  onlyKey?: string;
  /** Leave out the features that are not enabled. */
  onlyEnabled?: boolean;
  /** Keys of the opt-in features the context's user and company opted in to. */
  optIns?: { user: ReadonlySet<string>; company: ReadonlySet<string> };
}
