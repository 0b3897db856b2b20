/**
 * Appliers for change requests (API.md §15). Applying one is a compare-and-swap on the versions each change was based
 * on, all or nothing: every check runs before the first write, then one version per changed targeting, config, kill
 * switch or prerequisites list, one flagStateVersion step for the environment, and history entries naming the request. The scheduler's firing is a
 * change too, so a replicated log applies it once whichever node sent it.
 */
import type { Actor } from "../../accounts/principal.js";
import type { ErrorData } from "../../errors/catalogue.js";
import { prepareTargeting, type PreparedTargeting } from "../segments/inline.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { historyLink, type ApplyContext, type Appliers } from "../apply-context.js";
import type { ChangeEnvelope } from "../changes.js";
import { refused, type AuditRecord } from "../outcome.js";
import { segmentLookup } from "../targeting-writes.js";
import { actsAsOwner } from "./approval-gate.js";
import { reviewerIdOf, rolloutIdOf, type BasedChange, type ChangeRequestRecord, type ProposedChange } from "./change-request-records.js";
import { beginRollout, startDetails, startRefusal } from "../rollouts/apply-rollouts.js";
import { prerequisitesOf, type EnvironmentFeatureState, type Prerequisite } from "../../features/feature-records.js";
import { prerequisiteIssues } from "./prerequisite-checks.js";
import { ChangeRequestRepository } from "./change-request-repository.js";
import { PolicyRepository, type EnvironmentPolicy } from "./policy.js";

type ChangeRequestAppliers = Pick<
  Appliers,
  "change-request.create" | "change-request.update" | "change-request.review" | "change-request.apply" | "change-request.cancel" | "change-request.fire"
>;

type Found = { ok: true; environment: EnvironmentRecord; request: ChangeRequestRecord; requests: ChangeRequestRepository; policy: EnvironmentPolicy } | { ok: false; error: ErrorData };

function find(context: ApplyContext, environmentId: string, requestId: string): Found {
  const environment = context.tenancy.getEnvironment(environmentId);
  const requests = new ChangeRequestRepository(context.store);
  const request = environment && requests.get(environment.id, requestId);
  if (!environment || !request) return refused("NOT_FOUND", `No change request ${requestId}.`);
  return { ok: true, environment, request, requests, policy: new PolicyRepository(context.store).policyOf(environment) };
}

function entity(request: ChangeRequestRecord) {
  return { kind: "change-request", id: request.id, environmentId: request.environmentId, appId: request.appId };
}

/** Each change with the current versions of its feature as its base; a 400 at `changes.N.feature` for an unknown one. */
function based(context: ApplyContext, environment: EnvironmentRecord, changes: ProposedChange[]): BasedChange[] | ErrorData {
  const result: BasedChange[] = [];
  for (const [index, change] of changes.entries()) {
    if (!context.features.getFeature(environment.appId, change.feature)) {
      return { code: "INVALID_BODY", message: ERRORS_INVALID, validationErrors: [{ path: `changes.${index}.feature`, message: `No feature ${change.feature}` }] };
    }
    const state = context.features.rulesOf(environment.id, change.feature);
    const base = { targetingVersion: state.targeting.version, configVersion: state.config.version, enabledVersion: state.enabledVersion ?? 0, prerequisitesVersion: state.prerequisitesVersion ?? 0 };
    result.push({ ...change, base });
  }
  return result;
}
const ERRORS_INVALID = "The request body is invalid.";

/** Approvals count only on the current revision; one rejection there rejects. */
function settle(request: ChangeRequestRecord, policy: EnvironmentPolicy): ChangeRequestRecord["state"] {
  const current = request.reviews.filter((review) => review.revision === request.revision);
  if (current.some((review) => review.decision === "reject")) return "rejected";
  const approvals = current.filter((review) => review.decision === "approve").length;
  if (approvals < (policy.requireApproval ? policy.minApprovals : Math.max(1, policy.minApprovals))) return "open";
  return request.scheduledAt !== null ? "scheduled" : "approved";
}

/**
 * Why the policy as it is now does not let the request be written (it may have tightened since the request was
 * approved or scheduled), or undefined.
 */
function approvalShortfall(request: ChangeRequestRecord, policy: EnvironmentPolicy): string | undefined {
  if (!policy.requireApproval) return undefined;
  const approvals = request.reviews.filter((review) => review.revision === request.revision && review.decision === "approve").length;
  return approvals < policy.minApprovals ? `The environment requires ${policy.minApprovals} approval(s) on revision ${request.revision}; the request holds ${approvals}.` : undefined;
}

/** A new or edited request's state: where no approval is required, a scheduled one is scheduled at once. */
function initialState(request: ChangeRequestRecord, policy: EnvironmentPolicy): ChangeRequestRecord["state"] {
  return !policy.requireApproval && request.scheduledAt !== null ? "scheduled" : "open";
}

/** One feature's line in the apply's audit details: its versions after, and what moved besides targeting and config. */
type WrittenFeature = {
  feature: string;
  targetingVersion: number;
  configVersion: number;
  enabled?: { from: boolean; to: boolean };
  enabledVersion?: number;
  prerequisites?: { from: Prerequisite[]; to: Prerequisite[] };
  prerequisitesVersion?: number;
  rolloutId?: string;
  /** The started rollout's details, as its own start records them: the webhooks raise `rollout.started` from them. */
  rollout?: Record<string, unknown>;
};
type Written = { ok: true; flagStateVersion: number; features: WrittenFeature[] } | { ok: false; error: ErrorData };

/** The kill switch's or the prerequisites' version moved since the request was based on it (a change that sets it). */
function sideConflict(proposed: BasedChange, state: EnvironmentFeatureState): string | undefined {
  const moved: string[] = [];
  if (proposed.enabled !== undefined && (state.enabledVersion ?? 0) !== (proposed.base.enabledVersion ?? 0)) {
    moved.push(`kill switch now version ${state.enabledVersion ?? 0}, based on ${proposed.base.enabledVersion ?? 0}`);
  }
  if (proposed.prerequisites !== undefined && (state.prerequisitesVersion ?? 0) !== (proposed.base.prerequisitesVersion ?? 0)) {
    moved.push(`prerequisites now version ${state.prerequisitesVersion ?? 0}, based on ${proposed.base.prerequisitesVersion ?? 0}`);
  }
  return moved.length > 0 ? `${proposed.feature} (${moved.join("; ")})` : undefined;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The compare-and-swap and every write of a request, or what stopped it (nothing written then). */
function writeRequest(context: ApplyContext, environment: EnvironmentRecord, request: ChangeRequestRecord, change: ChangeEnvelope): Written {
  const { features } = context;
  const conflicts: string[] = [];
  const prepared = new Map<string, Extract<PreparedTargeting, { ok: true }>>();
  const graph = features.prerequisiteGraph(environment.id, environment.appId);
  for (const [index, proposed] of request.changes.entries()) {
    const feature = features.getFeature(environment.appId, proposed.feature);
    if (!feature) {
      conflicts.push(`${proposed.feature} (archived)`);
      continue;
    }
    const state = features.rulesOf(environment.id, proposed.feature);
    if (state.targeting.version !== proposed.base.targetingVersion || state.config.version !== proposed.base.configVersion) {
      conflicts.push(`${proposed.feature} (now targeting version ${state.targeting.version}, config version ${state.config.version}; based on ${proposed.base.targetingVersion} and ${proposed.base.configVersion})`);
    }
    const moved = sideConflict(proposed, state);
    if (moved) conflicts.push(moved);
    if (proposed.prerequisites) {
      // Other features' prerequisites may have moved since the request was checked: the graph is checked again as it is now.
      const issues = prerequisiteIssues(features, environment.appId, proposed.feature, proposed.prerequisites, graph, `changes.${index}.prerequisites`);
      if (issues.length > 0) return { ok: false, error: { code: "CONFLICT", message: `${issues[0]!.path}: ${issues.map((issue) => issue.message).join("; ")}` } };
      graph.set(proposed.feature, proposed.prerequisites);
    }
    if (proposed.targeting) {
      const rules = prepareTargeting(proposed.targeting.rules, segmentLookup(context, environment.appId));
      if (!rules.ok) return { ok: false, error: { code: "INVALID_RULES", message: `changes.${index}.targeting: ${rules.message}` } };
      prepared.set(proposed.feature, rules);
    }
    if (proposed.rollout) {
      const refusal = startRefusal(context, environment, proposed.feature, rolloutIdOf(request));
      if (refusal) return { ok: false, error: { ...refusal.error, message: `changes.${index}.rollout: ${refusal.error.message}` } };
    }
  }
  if (conflicts.length > 0) {
    const message = `The rules changed since the request was based on them: ${conflicts.join("; ")}. Edit the request onto the current versions.`;
    return { ok: false, error: { code: "CONFLICT", message } };
  }
  const link = historyLink(context, change, request.id);
  const written: WrittenFeature[] = [];
  for (const proposed of request.changes) {
    const before = features.rulesOf(environment.id, proposed.feature);
    const line: Partial<WrittenFeature> = {};
    const rules = prepared.get(proposed.feature);
    if (rules) features.writeRules(environment.id, proposed.feature, "targeting", rules.served, change.at, link, rules.segmentRules, false);
    if (proposed.config) features.writeRules(environment.id, proposed.feature, "config", proposed.config.variants, change.at, link, undefined, false);
    // The kill switch and the prerequisites: written only where they move, as their direct writes are.
    const wasEnabled = before.enabled !== false;
    if (proposed.enabled !== undefined && proposed.enabled !== wasEnabled) {
      line.enabledVersion = features.writeEnabled(environment.id, proposed.feature, proposed.enabled, change.at, link, false)!.version;
      line.enabled = { from: wasEnabled, to: proposed.enabled };
    }
    const previous = prerequisitesOf(before);
    if (proposed.prerequisites !== undefined && !same(previous, proposed.prerequisites)) {
      line.prerequisitesVersion = features.writePrerequisites(environment.id, proposed.feature, proposed.prerequisites, change.at, link, false)!.version;
      line.prerequisites = { from: previous, to: proposed.prerequisites };
    }
    // A rollout's start: its first step's targeting (its checks passed above). The request's author started it.
    const begun = proposed.rollout && beginRollout(context, environment, proposed.feature, rolloutIdOf(request), proposed.rollout, request.createdBy, { at: change.at, link });
    if (begun && !begun.ok) return begun;
    if (begun) Object.assign(line, { rolloutId: begun.rollout.id, rollout: startDetails(begun) });
    const state = features.rulesOf(environment.id, proposed.feature);
    written.push({ feature: proposed.feature, targetingVersion: state.targeting.version, configVersion: state.config.version, ...line });
  }
  const flagStateVersion = context.tenancy.bumpFlagStateVersions([environment.id]).get(environment.id)!;
  return { ok: true, flagStateVersion, features: written };
}

function mayManage(context: ApplyContext, request: ChangeRequestRecord, actor: Actor): boolean {
  return reviewerIdOf(actor) === request.authorId || actsAsOwner(context, actor);
}

function ok<T>(value: T, audit: AuditRecord, flagStates?: [string, number][]) {
  return { ok: true as const, value, audit, ...(flagStates ? { effects: { flagStates } } : {}) };
}

export const CHANGE_REQUEST_APPLIERS: ChangeRequestAppliers = {
  "change-request.create"(context, change) {
    const environment = context.tenancy.getEnvironment(change.environmentId);
    if (!environment) return refused("NOT_FOUND", `No environment ${change.environmentId}.`);
    const requests = new ChangeRequestRepository(context.store);
    if (requests.get(environment.id, change.requestId)) return refused("CONFLICT", `Change request ${change.requestId} exists.`);
    const changes = based(context, environment, change.changes);
    if (!Array.isArray(changes)) return { ok: false, error: changes };
    const request: ChangeRequestRecord = {
      id: change.requestId,
      environmentId: environment.id,
      appId: environment.appId,
      title: change.title,
      description: change.description,
      state: "open",
      revision: 1,
      changes,
      reviews: [],
      createdBy: change.actor,
      authorId: reviewerIdOf(change.actor),
      createdAt: change.at,
      updatedAt: change.at,
      scheduledAt: change.scheduledAt,
      appliedAt: null,
      suspendedReason: null,
      comment: change.comment ?? null,
    };
    request.state = initialState(request, new PolicyRepository(context.store).policyOf(environment));
    requests.put(request);
    return ok({ changeRequest: request }, { action: "change-request.create", entity: entity(request), details: { title: request.title, features: changes.map((each) => each.feature), scheduledAt: request.scheduledAt, state: request.state } });
  },

  "change-request.update"(context, change) {
    const found = find(context, change.environmentId, change.requestId);
    if (!found.ok) return found;
    const { environment, request, requests, policy } = found;
    if (!mayManage(context, request, change.actor)) return refused("FORBIDDEN", "Only the request's author or an owner may edit it.");
    if (request.state === "applied") return refused("CONFLICT", `Change request ${request.id} is applied; propose a new one.`);
    let changes = request.changes;
    if (change.changes !== undefined) {
      const rebased = based(context, environment, change.changes);
      if (!Array.isArray(rebased)) return { ok: false, error: rebased };
      changes = rebased;
    }
    const edited: ChangeRequestRecord = {
      ...request,
      ...(change.title !== undefined ? { title: change.title } : {}),
      ...(change.description !== undefined ? { description: change.description } : {}),
      ...(change.scheduledAt !== undefined ? { scheduledAt: change.scheduledAt } : {}),
      changes,
      // Approvals were given to the previous revision: an edit voids them all.
      revision: request.revision + 1,
      updatedAt: change.at,
      suspendedReason: null,
    };
    edited.state = initialState(edited, policy);
    requests.put(edited);
    return ok({ changeRequest: edited }, { action: "change-request.update", entity: entity(edited), details: { revision: edited.revision, from: request.state, to: edited.state } });
  },

  "change-request.review"(context, change) {
    const found = find(context, change.environmentId, change.requestId);
    if (!found.ok) return found;
    const { request, requests, policy } = found;
    const reviewerId = reviewerIdOf(change.actor);
    if (reviewerId === request.authorId && !policy.allowSelfApproval) return refused("FORBIDDEN", "The author may not review their own request in this environment.");
    if (change.revision !== null && change.revision !== request.revision) return refused("CONFLICT", `The request is at revision ${request.revision}, not ${change.revision}.`);
    if (request.state !== "open" && request.state !== "approved") return refused("CONFLICT", `Change request ${request.id} is ${request.state}.`);
    if (request.reviews.some((review) => review.reviewerId === reviewerId && review.revision === request.revision)) {
      return refused("CONFLICT", `You already reviewed revision ${request.revision}.`);
    }
    const review = { reviewerId, actor: change.actor, decision: change.decision, comment: change.comment, revision: request.revision, at: change.at };
    const reviewed: ChangeRequestRecord = { ...request, reviews: [...request.reviews, review], updatedAt: change.at };
    reviewed.state = settle(reviewed, policy);
    requests.put(reviewed);
    return ok({ changeRequest: reviewed }, { action: `change-request.${change.decision}`, entity: entity(reviewed), details: { revision: request.revision, comment: change.comment, state: reviewed.state } });
  },

  "change-request.apply"(context, change) {
    const found = find(context, change.environmentId, change.requestId);
    if (!found.ok) return found;
    const { environment, request, requests, policy } = found;
    const applicable = request.state === "approved" || (request.state === "open" && !policy.requireApproval);
    if (!applicable) return refused("CONFLICT", `Change request ${request.id} is ${request.state}${request.state === "open" ? ": it needs approval first" : ""}.`);
    const shortfall = approvalShortfall(request, policy);
    if (shortfall) return refused("CONFLICT", shortfall);
    const written = writeRequest(context, environment, request, change);
    if (!written.ok) return { ok: false, error: written.error };
    const applied: ChangeRequestRecord = { ...request, state: "applied", appliedAt: change.at, updatedAt: change.at };
    requests.put(applied);
    return ok(
      { changeRequest: applied, flagStateVersion: written.flagStateVersion },
      { action: "change-request.apply", entity: entity(applied), details: { revision: applied.revision, features: written.features, flagStateVersion: written.flagStateVersion } },
      [[environment.id, written.flagStateVersion]],
    );
  },

  "change-request.cancel"(context, change) {
    const found = find(context, change.environmentId, change.requestId);
    if (!found.ok) return found;
    const { request, requests } = found;
    if (!mayManage(context, request, change.actor)) return refused("FORBIDDEN", "Only the request's author or an owner may cancel it.");
    if (!["open", "approved", "rejected", "scheduled"].includes(request.state)) return refused("CONFLICT", `Change request ${request.id} is ${request.state}.`);
    const cancelled: ChangeRequestRecord = { ...request, state: "cancelled", updatedAt: change.at };
    requests.put(cancelled);
    return ok({ changeRequest: cancelled }, { action: "change-request.cancel", entity: entity(cancelled), details: { from: request.state } });
  },

  "change-request.fire"(context, change) {
    const environment = context.tenancy.getEnvironment(change.environmentId);
    const requests = new ChangeRequestRepository(context.store);
    const request = environment && requests.get(environment.id, change.requestId);
    // Not scheduled (any more), or not due by the firing's own time: a duplicate or early firing does nothing.
    if (!environment || !request || request.state !== "scheduled" || request.scheduledAt === null || change.at < request.scheduledAt) {
      return { ok: true, value: { changeRequest: request ?? null, applied: false }, audit: null };
    }
    const shortfall = approvalShortfall(request, new PolicyRepository(context.store).policyOf(environment));
    const written: Written = shortfall ? { ok: false, error: { code: "CONFLICT", message: shortfall } } : writeRequest(context, environment, request, change);
    if (!written.ok) {
      const suspended: ChangeRequestRecord = { ...request, state: "suspended", suspendedReason: written.error.message, updatedAt: change.at };
      requests.put(suspended);
      return ok({ changeRequest: suspended, applied: false }, { action: "change-request.suspend", entity: entity(suspended), details: { reason: written.error.message, scheduledAt: request.scheduledAt } });
    }
    const applied: ChangeRequestRecord = { ...request, state: "applied", appliedAt: change.at, updatedAt: change.at };
    requests.put(applied);
    return ok(
      { changeRequest: applied, applied: true },
      { action: "change-request.apply", entity: entity(applied), details: { revision: applied.revision, scheduledAt: request.scheduledAt, features: written.features, flagStateVersion: written.flagStateVersion } },
      [[environment.id, written.flagStateVersion]],
    );
  },
};
