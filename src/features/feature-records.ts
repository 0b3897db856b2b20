/** App-level facts about a feature; targeting and config live per environment. */
export interface FeatureRecord {
  id: string;
  key: string;
  /** The display name people see; null (features made before names existed) shows the key. */
  name: string | null;
  description: string | null;
  link: string | null;
  stage: string | null;
  /** The app release stage the feature was put in (API.md §10); absent or null when `stage` is only a label. */
  stageId?: string | null;
  createdAt: string;
  optInEnabled: boolean;
  /** Extra event names that count as usage of this feature (analytics). */
  usageEvents: string[];
  archivedAt: string | null;
  /** When its app-level fields (name, description, link, stage, opt-in, usage events) last changed, and who did it. */
  fieldsChanged?: { at: string; actor: HistoryLink["actor"] | null };
}

/** What people see for a feature: its name, else its key. */
export function displayName(feature: Pick<FeatureRecord, "key" | "name">): string {
  return feature.name ?? feature.key;
}

/** Stored exactly as saved: the rule trees are opaque here and validated before they reach the store. */
export interface TargetingState {
  version: number;
  /** What is served and evaluated: segment references already inlined. */
  rules: unknown[];
  /** The rules as saved, with their `{type: "segment"}` nodes; present only when they name a segment. */
  segmentRules?: unknown[];
}

export interface ConfigState {
  version: number;
  variants: unknown[];
}

/** A feature's rules in one environment. */
export interface EnvironmentFeatureState {
  targeting: TargetingState;
  config: ConfigState;
  /** The kill switch: false turns the feature off for every context here, its rules kept. Absent: on. */
  enabled?: boolean;
  /** How many times the kill switch was moved here (the version of its history entries). */
  enabledVersion?: number;
  /** Features of the same app that must be on (`enabled: true`) or off for a context before this one can be. */
  prerequisites?: Prerequisite[];
  /** How many times the prerequisites were written here (the version of their history entries). */
  prerequisitesVersion?: number;
}

/** A feature this one depends on in an environment: its access must be on (or, `enabled: false`, off). */
export interface Prerequisite {
  feature: string;
  enabled: boolean;
}

/** The prerequisites of a feature in an environment (none when never set). */
export function prerequisitesOf(state: EnvironmentFeatureState): Prerequisite[] {
  return state.prerequisites ?? [];
}

/** Whether the kill switch leaves the feature on in this environment. */
export function isSwitchedOn(state: EnvironmentFeatureState): boolean {
  return state.enabled !== false;
}

/**
 * A feature's own targeting rules as far as the kill switch lets them count: none while it is off. What is served and
 * evaluated is these with the prerequisites compiled in (served-rules.ts), which reads them through here.
 */
export function servedTargetingRules(state: EnvironmentFeatureState): unknown[] {
  return isSwitchedOn(state) ? state.targeting.rules : [];
}

/** Which audit entry made a version, and who: "who changed this rule" has an answer. */
export interface HistoryLink {
  auditCursor: string;
  actor: { kind: string; id: string; email?: string; memberId?: string };
  /** What the author said about the change (≤ 500 characters). */
  comment?: string;
  /** The change request that made this version, when one did. */
  changeRequestId?: string;
  /** The guarded rollout (API.md §17) that wrote this version, when one did. */
  rolloutId?: string;
}

export interface HistoryEntry extends Partial<HistoryLink> {
  kind: "targeting" | "config" | "enabled" | "prerequisites";
  version: number;
  rules?: unknown[];
  segmentRules?: unknown[];
  variants?: unknown[];
  /** Kill-switch entries: the switch's new position. */
  enabled?: boolean;
  /** Prerequisite entries: the list as written. */
  prerequisites?: Prerequisite[];
  at: string;
}

export const UNTARGETED: EnvironmentFeatureState = Object.freeze({
  targeting: Object.freeze({ version: 0, rules: [] }),
  config: Object.freeze({ version: 0, variants: [] }),
}) as EnvironmentFeatureState;

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    /** Records, and the feature id under each key (the key index). */
    features: FeatureRecord | string;
    targeting: EnvironmentFeatureState;
    history: HistoryEntry;
  }
}
