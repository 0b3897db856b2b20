/** Change requests (API.md §15) as stored: a proposed set of targeting/config changes to one environment. */
import type { Actor } from "../../accounts/principal.js";
import type { Prerequisite } from "../../features/feature-records.js";
import type { RolloutSettings } from "../rollouts/rollout-records.js";

export const CHANGE_REQUEST_STATES = ["open", "approved", "rejected", "cancelled", "scheduled", "applied", "suspended"] as const;
export type ChangeRequestState = (typeof CHANGE_REQUEST_STATES)[number];

/**
 * One feature's proposed targeting, config, kill switch and/or prerequisites, as saved (targeting may name segments;
 * inlined when applied).
 */
export interface ProposedChange {
  feature: string;
  targeting?: { rules: unknown[] };
  config?: { variants: unknown[] };
  /** The kill switch's position to set. */
  enabled?: boolean;
  /** The whole list of prerequisites to set in the request's environment (`[]` removes them). */
  prerequisites?: Prerequisite[];
  /** A guarded rollout (API.md §17) to start on the feature when applied, where the policy makes its start a request. */
  rollout?: RolloutSettings;
}

/**
 * A proposed change with the versions it was based on: apply is a compare-and-swap on them (targeting and config
 * always; the kill switch's and the prerequisites' when the change sets them). Requests stored before the kill switch
 * and prerequisites could be proposed lack those two.
 */
export interface BasedChange extends ProposedChange {
  base: { targetingVersion: number; configVersion: number; enabledVersion?: number; prerequisitesVersion?: number };
}

export interface ChangeRequestReview {
  /** The member's id (the admin token reviews as `admin`): one review per reviewer and revision. */
  reviewerId: string;
  actor: Actor;
  decision: "approve" | "reject";
  comment: string | null;
  revision: number;
  at: string;
}

export interface ChangeRequestRecord {
  id: string;
  environmentId: string;
  appId: string;
  title: string;
  description: string | null;
  state: ChangeRequestState;
  /** 1 when created; every edit steps it and voids the approvals given before. */
  revision: number;
  changes: BasedChange[];
  reviews: ChangeRequestReview[];
  createdBy: Actor;
  /** The author's member id (`admin` for the admin token): who may not approve it without allowSelfApproval. */
  authorId: string;
  createdAt: string;
  updatedAt: string;
  /** ISO 8601 UTC; null: applied by hand. */
  scheduledAt: string | null;
  appliedAt: string | null;
  /** Why a scheduled request was suspended (a conflict when it fired). */
  suspendedReason: string | null;
  comment: string | null;
}

/** The id of the rollout a request's rollout change starts: decided by the request, so every node starts the same one. */
export function rolloutIdOf(request: Pick<ChangeRequestRecord, "id">): string {
  return `ro_${request.id.replace(/^cr_/, "")}`;
}

/** Who an actor is as a reviewer or author: the member, or the admin token. */
export function reviewerIdOf(actor: Actor): string {
  return actor.kind === "token" ? actor.memberId : actor.id;
}
