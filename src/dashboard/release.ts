/** Promotion, prerequisites and starting a guarded rollout (docs/API.md §15, §17) as the dashboard calls them. */
import { api, enc } from "./api";
import type { ChangeRequest, ListDiff, RuleChange } from "./governance";

export interface Prerequisite {
  feature: string;
  /** true: the feature must be on for the context; false: it must be off. */
  enabled: boolean;
}

/** Who says `bypass` (an owner, with a reason) and the comment history keeps: every management write takes them. */
export interface WriteNotes {
  comment?: string;
  bypass?: boolean;
  reason?: string;
}

const featurePath = (environmentId: string, featureKey: string) => `/admin/environments/${enc(environmentId)}/features/${enc(featureKey)}`;

export type PromoteAnswer =
  | { outcome: "written" | "unchanged"; key: string; from: string; to: string; wrote: ("targeting" | "config")[]; targetingVersion: number; configVersion: number }
  | { outcome: "change-request"; key: string; from: string; to: string; changeRequest: ChangeRequest };

export const promote = (environmentId: string, featureKey: string, body: { to: string; title?: string } & WriteNotes) =>
  api<PromoteAnswer & { success: true }>("POST", `${featurePath(environmentId, featureKey)}/promote`, body);

export const savePrerequisites = (environmentId: string, featureKey: string, prerequisites: Prerequisite[], notes: WriteNotes = {}) =>
  api<{ prerequisites: Prerequisite[]; version: number; changed: boolean }>("PUT", `${featurePath(environmentId, featureKey)}/prerequisites`, { prerequisites, ...notes });

export interface RolloutGuardSettings {
  event: string;
  direction: "lower_is_better" | "higher_is_better";
  maxRelativeChange: number;
  alpha: number;
}

export interface RolloutSettings {
  steps: number[];
  stepSeconds: number;
  minExposures: number;
  attribute: "company.id" | "user.id";
  guards: RolloutGuardSettings[];
  onBreach: "rollback" | "pause";
}

export interface StartAnswer {
  rollout: { id: string; state: string } | null;
  changeRequest?: ChangeRequest;
  warnings: { path: string; message: string }[];
}

/** `bypass` and `reason` go in the query: the body is the rollout's settings, which the service checks strictly. */
export function startRollout(environmentId: string, featureKey: string, settings: RolloutSettings, notes: WriteNotes = {}) {
  const query = new URLSearchParams();
  if (notes.bypass) query.set("bypass", "true");
  if (notes.reason) query.set("reason", notes.reason);
  const suffix = query.toString() ? `?${query.toString()}` : "";
  return api<StartAnswer>("POST", `${featurePath(environmentId, featureKey)}/rollouts${suffix}`, settings);
}

/** Rule by rule, by position, as the service diffs a change request (what a promotion would write, before it does). */
export function listDiff(from: unknown[], to: unknown[]): ListDiff {
  const rules: { index: number; change: RuleChange }[] = [];
  for (let index = 0; index < Math.max(from.length, to.length); index++) {
    const change: RuleChange = index >= from.length ? "added" : index >= to.length ? "removed" : JSON.stringify(from[index]) === JSON.stringify(to[index]) ? "unchanged" : "changed";
    rules.push({ index, change });
  }
  return { from, to, rules, changed: rules.some((rule) => rule.change !== "unchanged") };
}

/** A step's time as a person reads it: "2 h", "1 d", "90 s". */
export const duration = (seconds: number) => (seconds % 86_400 === 0 ? `${seconds / 86_400} d` : seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`);
