/** Change requests, policies and the kill switch (docs/API.md §15) as the dashboard reads and writes them. */
import { api, enc, get, type Actor, type Member } from "./api";

export interface Policy {
  requireApproval: boolean;
  minApprovals: number;
  allowSelfApproval: boolean;
  confirmChanges: boolean;
}

export type RequestState = "open" | "approved" | "rejected" | "cancelled" | "scheduled" | "applied" | "suspended";

export type RuleChange = "added" | "removed" | "changed" | "unchanged";

/** One list's diff as the API computes it: by position, against the feature's rules as they are now. */
export interface ListDiff {
  from: unknown[];
  to: unknown[];
  rules: { index: number; change: RuleChange }[];
  changed: boolean;
}

/** A prerequisite as the API writes it: the feature is on only where `feature`'s access is (or is not) on. */
export interface RequestPrerequisite {
  feature: string;
  enabled: boolean;
}

export interface RequestChange {
  feature: string;
  base: { targetingVersion: number; configVersion: number; enabledVersion?: number; prerequisitesVersion?: number };
  targeting?: { rules: unknown[] };
  config?: { variants: unknown[] };
  /** The kill switch to set (API.md §15): true serves the feature again, false turns it off for everyone. */
  enabled?: boolean;
  /** The whole list of prerequisites to set (`[]` removes them). */
  prerequisites?: RequestPrerequisite[];
  /** A guarded rollout's settings (docs/API.md §17): applying the request starts it. */
  rollout?: { steps: number[]; stepSeconds: number; minExposures: number; attribute: string; guards: { event: string; direction: string; maxRelativeChange: number }[]; onBreach: string };
  diff: {
    targeting?: ListDiff;
    config?: ListDiff;
    enabled?: { from: boolean; to: boolean; changed: boolean };
    prerequisites?: { from: RequestPrerequisite[]; to: RequestPrerequisite[]; changed: boolean };
    current: { targetingVersion: number; configVersion: number; enabledVersion?: number; prerequisitesVersion?: number };
  };
}

export interface Review {
  reviewerId: string;
  actor: Actor;
  decision: "approve" | "reject";
  comment: string | null;
  revision: number;
  at: string;
}

export interface ChangeRequest {
  id: string;
  environmentId: string;
  title: string;
  description: string | null;
  state: RequestState;
  revision: number;
  changes: RequestChange[];
  approvals: Review[];
  reviews: Review[];
  createdBy: Actor & { memberId?: string };
  createdAt: string;
  updatedAt: string;
  scheduledAt: string | null;
  appliedAt: string | null;
  suspendedReason: string | null;
  comment: string | null;
}

/** Still waiting for something (a review, an apply, its time): what the list shows first and the feature banner names. */
export const PENDING_STATES: readonly RequestState[] = ["open", "approved", "scheduled"];
export const isPending = (request: ChangeRequest) => PENDING_STATES.includes(request.state);

/** What each state means, in the words the pages show. */
export const STATE_TEXT: Record<RequestState, string> = {
  open: "awaiting review",
  approved: "approved, ready to apply",
  scheduled: "scheduled",
  applied: "applied",
  rejected: "rejected",
  cancelled: "cancelled",
  suspended: "suspended",
};

const base = (environmentId: string) => `/admin/environments/${enc(environmentId)}`;

export const loadPolicy = (environmentId: string) => get<{ policy: Policy }>(`${base(environmentId)}/policy`).then((answer) => answer.policy);
export const savePolicy = (environmentId: string, policy: Partial<Policy>) => api<{ policy: Policy }>("PUT", `${base(environmentId)}/policy`, policy).then((answer) => answer.policy);

export const listRequests = (environmentId: string) => get<{ changeRequests: ChangeRequest[] }>(`${base(environmentId)}/change-requests`).then((answer) => answer.changeRequests);
export const loadRequest = (environmentId: string, id: string) => get<{ changeRequest: ChangeRequest }>(`${base(environmentId)}/change-requests/${enc(id)}`).then((answer) => answer.changeRequest);

export interface Proposal {
  title: string;
  description?: string;
  scheduledAt?: string;
  changes: { feature: string; targeting?: { rules: unknown[] }; config?: { variants: unknown[] }; enabled?: boolean; prerequisites?: RequestPrerequisite[] }[];
}

export const createRequest = (environmentId: string, proposal: Proposal) =>
  api<{ changeRequest: ChangeRequest }>("POST", `${base(environmentId)}/change-requests`, proposal).then((answer) => answer.changeRequest);

/** A request action (`reviews`, `apply`, `cancel`) or an edit (PUT); every one answers the request as it now is. */
export function requestAction(environmentId: string, id: string, action: "reviews" | "apply" | "cancel" | "edit", body: Record<string, unknown> = {}): Promise<ChangeRequest> {
  const path = `${base(environmentId)}/change-requests/${enc(id)}`;
  return api<{ changeRequest: ChangeRequest }>(action === "edit" ? "PUT" : "POST", action === "edit" ? path : `${path}/${action}`, body).then((answer) => answer.changeRequest);
}

export const setEnabled = (environmentId: string, featureKey: string, body: { enabled: boolean; comment?: string; bypass?: boolean; reason?: string }) =>
  api<{ enabled: boolean; changed: boolean }>("PUT", `${base(environmentId)}/features/${enc(featureKey)}/enabled`, body);

/** The member id behind an actor (a member's session or one of their API tokens); `admin` for the admin token. */
export function memberIdOf(actor: ChangeRequest["createdBy"]): string {
  if (actor.kind === "token" && actor.memberId) return actor.memberId;
  return actor.id;
}

export const isAuthor = (request: ChangeRequest, member: Member) => memberIdOf(request.createdBy) === member.id;

/** A `datetime-local` value (the person's own clock) as the ISO 8601 UTC time the API takes; undefined when empty. */
export function isoFromLocal(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
