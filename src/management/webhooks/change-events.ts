/**
 * Which webhook events an applied management change raises, read from its audit entry and the rules writes it made.
 * One table, by audit action: a new kind of change that should be heard is one row here.
 */
import type { RulesWrite } from "../../features/feature-repository.js";
import type { AuditRecord } from "../outcome.js";
import type { WebhookEventType } from "./webhook-event.js";

/** An event before names are looked up: what it is about, and what changed. */
export interface RaisedEvent {
  type: WebhookEventType;
  appId: string | null;
  environmentId: string | null;
  featureKey: string | null;
  before: unknown;
  after: unknown;
  details?: Record<string, unknown>;
}

type FromAudit = (audit: AuditRecord) => RaisedEvent[];

const about = (audit: AuditRecord) => ({ appId: audit.entity.appId ?? null, environmentId: audit.entity.environmentId ?? null, featureKey: audit.entity.key ?? null });

/** A feature's app-level fields: `details.changes` is `{field: {from, to}}`. */
function featureEvent(type: WebhookEventType): FromAudit {
  return (audit) => {
    const changes = (audit.details.changes ?? {}) as Record<string, { from: unknown; to: unknown }>;
    const before = Object.fromEntries(Object.entries(changes).map(([field, change]) => [field, change.from]));
    const after = Object.fromEntries(Object.entries(changes).map(([field, change]) => [field, change.to]));
    return [{ type, ...about(audit), before, after }];
  };
}

/** The kill switch is a targeting change of one environment: what is served moves, the rules stay. */
const killSwitch: FromAudit = (audit) => {
  const enabled = audit.details.enabled as { from: boolean; to: boolean };
  return [{ type: "targeting.changed", ...about(audit), before: { enabled: enabled.from }, after: { enabled: enabled.to }, details: { killSwitch: true } }];
};

/** A change request's transition; `scheduled` also when the transition left it scheduled. */
function changeRequestEvent(type: WebhookEventType): FromAudit {
  return (audit) => {
    const state = (audit.details.state ?? audit.details.to) as string | undefined;
    const base = { ...about(audit), featureKey: null, before: null, after: null, details: { changeRequestId: audit.entity.id } };
    return [{ type, ...base }, ...(state === "scheduled" && type !== "change_request.scheduled" ? [{ type: "change_request.scheduled" as const, ...base }] : [])];
  };
}

/**
 * A rollout transition (API.md §17): the served rules before and after, for transitions that write targeting (a step,
 * a rollback), are the event's before and after, so its diff is the step's.
 */
function rolloutEvent(type: WebhookEventType): FromAudit {
  return (audit) => [{ type, ...about(audit), before: audit.details.before ?? null, after: audit.details.after ?? null, details: audit.details }];
}

/** One feature's line of a change request's apply (apply-change-requests.ts). */
interface AppliedFeature {
  feature: string;
  enabled?: { from: boolean; to: boolean };
  rollout?: Record<string, unknown>;
}

/**
 * A change request's apply (by hand or on its schedule) is one audit entry, but what it did is heard as the direct
 * writes would be: a kill switch it moved is a `targeting.changed` like the switch's own, a rollout it started a
 * `rollout.started` (details as the direct start's, plus the request's id); then `change_request.applied`.
 */
const changeRequestApplied: FromAudit = (audit) => {
  const features = (audit.details.features ?? []) as AppliedFeature[];
  const where = { appId: audit.entity.appId ?? null, environmentId: audit.entity.environmentId ?? null };
  const changeRequestId = audit.entity.id;
  const raised: RaisedEvent[] = [];
  for (const line of features) {
    if (line.enabled) {
      raised.push({ type: "targeting.changed", ...where, featureKey: line.feature, before: { enabled: line.enabled.from }, after: { enabled: line.enabled.to }, details: { killSwitch: true, changeRequestId } });
    }
  }
  for (const line of features) {
    if (line.rollout) {
      raised.push({ type: "rollout.started", ...where, featureKey: line.feature, before: line.rollout.before ?? null, after: line.rollout.after ?? null, details: { ...line.rollout, changeRequestId } });
    }
  }
  return [...raised, ...changeRequestEvent("change_request.applied")(audit)];
};

/** Audit action → the events it raises (besides `targeting.changed`/`config.changed`, read from the rules writes). */
export const AUDIT_ACTION_EVENTS: Readonly<Record<string, FromAudit>> = {
  "feature.create": featureEvent("feature.created"),
  "feature.update": featureEvent("feature.updated"),
  "feature.archive": (audit) => [{ type: "feature.archived", ...about(audit), before: null, after: null }],
  "feature.disable": killSwitch,
  "feature.enable": killSwitch,
  "change-request.create": changeRequestEvent("change_request.created"),
  "change-request.update": (audit) => ((audit.details.to as string) === "scheduled" ? changeRequestEvent("change_request.scheduled")(audit) : []),
  "change-request.approve": changeRequestEvent("change_request.approved"),
  "change-request.reject": changeRequestEvent("change_request.rejected"),
  "change-request.apply": changeRequestApplied,
  "change-request.suspend": changeRequestEvent("change_request.suspended"),
  "rollout.started": rolloutEvent("rollout.started"),
  "rollout.advanced": rolloutEvent("rollout.advanced"),
  "rollout.paused": rolloutEvent("rollout.paused"),
  "rollout.rolled_back": rolloutEvent("rollout.rolled_back"),
  "rollout.completed": rolloutEvent("rollout.completed"),
};

/** Every event of one applied change, in order: the rules it wrote first, then its own transition. */
export function eventsOfChange(audit: AuditRecord | null, writes: RulesWrite[]): RaisedEvent[] {
  const rules: RaisedEvent[] = writes.map((write) => ({
    type: write.kind === "targeting" ? "targeting.changed" : "config.changed",
    appId: null,
    environmentId: write.environmentId,
    featureKey: write.featureKey,
    before: write.before,
    after: write.after,
    details: { fromVersion: write.fromVersion, toVersion: write.toVersion },
  }));
  const own = audit ? (AUDIT_ACTION_EVENTS[audit.action]?.(audit) ?? []) : [];
  return [...rules, ...own];
}
