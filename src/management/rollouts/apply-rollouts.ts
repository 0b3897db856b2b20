/**
 * Appliers of guarded rollouts (API.md §17). Every transition is one change: its targeting version (with `rolloutId`
 * in the history), the flagStateVersion step, the rollout record and its audit entry in one transaction. A change the
 * driver submits names the state and step it was decided on (`expected`): in cluster mode every node may submit the
 * same decision, the first applies and the others find the rollout moved on and change nothing.
 */
import type { Actor } from "../../accounts/principal.js";
import type { ErrorData } from "../../errors/catalogue.js";
import type { HistoryLink } from "../../features/feature-records.js";
import type { EnvironmentRecord } from "../../tenancy/tenancy-records.js";
import { historyLink, type ApplyContext, type Appliers } from "../apply-context.js";
import type { ChangeOf } from "../changes.js";
import { refused, type AuditRecord } from "../outcome.js";
import { prepareTargeting } from "../segments/inline.js";
import { segmentLookup } from "../targeting-writes.js";
import { ACTIVE_STATES, type RolloutRecord, type RolloutSettings, type RolloutState } from "./rollout-records.js";
import { RolloutRepository } from "./rollout-repository.js";
import { hashesOn, stepRules } from "./rollout-targeting.js";

type RolloutAppliers = Pick<Appliers, "rollout.start" | "rollout.transition">;

/** The §16 event names: the webhooks derive their events from these audit actions. */
const ACTIONS = {
  start: "rollout.started",
  advance: "rollout.advanced",
  complete: "rollout.completed",
  pause: "rollout.paused",
  resume: "rollout.resumed",
  cancel: "rollout.cancelled",
  rollback: "rollout.rolled_back",
} as const;

function entity(rollout: RolloutRecord) {
  return { kind: "rollout", id: rollout.id, key: rollout.featureKey, environmentId: rollout.environmentId, appId: rollout.appId };
}

type Written = { ok: true; version: number; flagStateVersion: number; before: unknown[]; after: unknown[] } | { ok: false; error: ErrorData };

/** When and on whose behalf a rollout writes, and the history link of its versions (without the rollout's id). */
export interface WriteStamp {
  at: string;
  link: HistoryLink;
}

function stampOf(context: ApplyContext, change: ChangeOf<"rollout.start" | "rollout.transition">): WriteStamp {
  return { at: change.at, link: historyLink(context, change) };
}

/** Writes `authored` (the rules as saved, segments named) as the feature's targeting, a version naming the rollout. */
function writeTargeting(context: ApplyContext, environment: EnvironmentRecord, rollout: RolloutRecord, authored: unknown[], stamp: WriteStamp): Written {
  const prepared = prepareTargeting(authored, segmentLookup(context, environment.appId));
  if (!prepared.ok) return refused("INVALID_RULES", prepared.message);
  const before = context.features.rulesOf(environment.id, rollout.featureKey).targeting.rules;
  const link = { ...stamp.link, rolloutId: rollout.id };
  const written = context.features.writeRules(environment.id, rollout.featureKey, "targeting", prepared.served, stamp.at, link, prepared.segmentRules);
  if (!written) return refused("NOT_FOUND", `No feature ${rollout.featureKey}.`);
  return { ok: true, version: written.state.targeting.version, flagStateVersion: written.flagStateVersion, before, after: prepared.served };
}

function authoredBase(rollout: RolloutRecord): unknown[] {
  return rollout.base.segmentRules ?? rollout.base.rules;
}

/** Writes the targeting of step `index` into `rollout` (its record, not yet stored). */
function enterStep(context: ApplyContext, environment: EnvironmentRecord, rollout: RolloutRecord, index: number, stamp: WriteStamp): Written {
  const percent = rollout.steps[index]!;
  const written = writeTargeting(context, environment, rollout, stepRules(authoredBase(rollout), rollout.featureKey, rollout.attribute, percent), stamp);
  if (!written.ok) return written;
  rollout.step = index;
  rollout.stepRecords[index] = { percent, startedAt: stamp.at, targetingVersion: written.version, evidence: null };
  rollout.writtenVersion = written.version;
  return written;
}

function settle(context: ApplyContext, rollout: RolloutRecord, state: RolloutState, at: string, action: string, reason: string | null): void {
  rollout.state = state;
  rollout.reason = reason;
  rollout.updatedAt = at;
  rollout.transitions = [...rollout.transitions, { at, action, step: rollout.step, reason }];
  if (!ACTIVE_STATES.has(state)) {
    rollout.endedAt = at;
    new RolloutRepository(context.store).dropProjected(rollout.id);
  }
  new RolloutRepository(context.store).put(rollout);
}

function handEdited(context: ApplyContext, rollout: RolloutRecord): number | undefined {
  const version = context.features.rulesOf(rollout.environmentId, rollout.featureKey).targeting.version;
  return version === rollout.writtenVersion ? undefined : version;
}

function done(rollout: RolloutRecord, audit: AuditRecord, flagStateVersion?: number) {
  return {
    ok: true as const,
    value: { rollout, applied: true },
    audit,
    ...(flagStateVersion !== undefined ? { effects: { flagStates: [[rollout.environmentId, flagStateVersion]] as [string, number][] } } : {}),
  };
}

/** Why a rollout cannot start on this feature now (checked before anything is written), or undefined. */
export function startRefusal(context: ApplyContext, environment: EnvironmentRecord, featureKey: string, rolloutId: string): { ok: false; error: ErrorData } | undefined {
  if (!context.features.getFeature(environment.appId, featureKey)) return refused("NOT_FOUND", `No feature ${featureKey}.`);
  const rollouts = new RolloutRepository(context.store);
  if (rollouts.get(environment.id, rolloutId)) return refused("CONFLICT", `Rollout ${rolloutId} exists.`);
  const active = rollouts.activeId(environment.id, featureKey);
  if (active !== undefined) return refused("CONFLICT", `Feature ${featureKey} already has an active rollout in this environment (${active}); pause, cancel or finish it first.`);
  const { targeting } = context.features.rulesOf(environment.id, featureKey);
  if (targeting.rules.length === 0) {
    return refused("CONFLICT", `Feature ${featureKey} has no targeting rules in this environment: a rollout raises the share of who the rules target, so set them first (a rule with {"type": "constant", "value": true} targets everyone).`);
  }
  // The steps write these rules again (segments inlined anew): checked here, so that no write is begun and refused.
  const prepared = prepareTargeting(targeting.segmentRules ?? targeting.rules, segmentLookup(context, environment.appId));
  if (!prepared.ok) return refused("INVALID_RULES", prepared.message);
  return undefined;
}

/**
 * Starts a rollout (its checks passed, startRefusal): the record and its first step's targeting. Also what applying
 * a change request that carries a rollout does (API.md §15: where approval is required, the start is one).
 */
export function beginRollout(
  context: ApplyContext,
  environment: EnvironmentRecord,
  featureKey: string,
  rolloutId: string,
  settings: RolloutSettings,
  createdBy: Actor,
  stamp: WriteStamp,
): { ok: true; rollout: RolloutRecord; written: Extract<Written, { ok: true }> } | { ok: false; error: ErrorData } {
  const { targeting } = context.features.rulesOf(environment.id, featureKey);
  const rollout: RolloutRecord = {
    ...settings,
    id: rolloutId,
    environmentId: environment.id,
    appId: environment.appId,
    featureKey,
    state: "running",
    step: 0,
    stepRecords: settings.steps.map((percent) => ({ percent, startedAt: null, targetingVersion: null, evidence: null })),
    base: { version: targeting.version, rules: targeting.rules, ...(targeting.segmentRules ? { segmentRules: targeting.segmentRules } : {}) },
    writtenVersion: targeting.version,
    sampleRatioChecked: !hashesOn(targeting.rules, featureKey, settings.attribute),
    reason: null,
    transitions: [],
    createdBy,
    createdAt: stamp.at,
    updatedAt: stamp.at,
    endedAt: null,
  };
  const written = enterStep(context, environment, rollout, 0, stamp);
  if (!written.ok) return written;
  const completes = rollout.steps.length === 1;
  settle(context, rollout, completes ? "completed" : "running", stamp.at, completes ? ACTIONS.complete : ACTIONS.start, null);
  return { ok: true, rollout, written };
}

/**
 * What a start records (the `rollout.started` audit entry's details; inside a change request's `change-request.apply`
 * entry, the feature's `rollout`, from which the webhooks raise `rollout.started` too).
 */
export function startDetails({ rollout, written }: { rollout: RolloutRecord; written: Extract<Written, { ok: true }> }): Record<string, unknown> {
  const { guards, steps, stepSeconds, minExposures, attribute, onBreach } = rollout;
  return { rolloutId: rollout.id, step: 0, percent: rollout.steps[0], steps, stepSeconds, minExposures, attribute, onBreach, guards, reason: null, before: written.before, after: written.after, toVersion: written.version };
}

export const ROLLOUT_APPLIERS: RolloutAppliers = {
  "rollout.start"(context, change) {
    const environment = context.tenancy.getEnvironment(change.environmentId);
    if (!environment) return refused("NOT_FOUND", `No environment ${change.environmentId}.`);
    const refusal = startRefusal(context, environment, change.featureKey, change.rolloutId);
    if (refusal) return refusal;
    const begun = beginRollout(context, environment, change.featureKey, change.rolloutId, change.settings, change.actor, stampOf(context, change));
    if (!begun.ok) return begun;
    const { rollout, written } = begun;
    return done(rollout, { action: ACTIONS.start, entity: entity(rollout), details: startDetails(begun) }, written.flagStateVersion);
  },

  "rollout.transition"(context, change) {
    const environment = context.tenancy.getEnvironment(change.environmentId);
    const rollouts = new RolloutRepository(context.store);
    const stored = environment && rollouts.get(environment.id, change.rolloutId);
    if (!environment || !stored) return refused("NOT_FOUND", `No rollout ${change.rolloutId}.`);
    // Decided on a state the rollout has left (another node's copy of the decision applied first): nothing to do.
    if (change.expected && (change.expected.state !== stored.state || change.expected.step !== stored.step)) {
      return { ok: true, value: { rollout: stored, applied: false }, audit: null };
    }
    const rollout: RolloutRecord = { ...stored, stepRecords: stored.stepRecords.map((step) => ({ ...step })) };
    const from = rollout.step;
    if (change.evidence) rollout.stepRecords[from]!.evidence = change.evidence;
    const automatic = change.expected !== null;
    const details = (extra: Record<string, unknown>) => ({ rolloutId: rollout.id, step: rollout.step, percent: rollout.steps[rollout.step], reason: rollout.reason, guards: change.evidence?.guards ?? null, exposures: change.evidence?.exposures ?? null, automatic, ...extra });
    const notActive = () => refused("CONFLICT", `Rollout ${rollout.id} is ${rollout.state}.`);

    switch (change.action) {
      case "advance": {
        if (rollout.state !== "running") return notActive();
        const edited = handEdited(context, rollout);
        if (edited !== undefined) {
          settle(context, rollout, "paused", change.at, ACTIONS.pause, `The feature's targeting was edited by hand during the rollout (version ${edited}); the rollout holds.`);
          return done(rollout, { action: ACTIONS.pause, entity: entity(rollout), details: details({}) });
        }
        const next = from + 1;
        if (next >= rollout.steps.length) return notActive();
        const written = enterStep(context, environment, rollout, next, stampOf(context, change));
        if (!written.ok) return written;
        const completes = next === rollout.steps.length - 1;
        settle(context, rollout, completes ? "completed" : "running", change.at, completes ? ACTIONS.complete : ACTIONS.advance, null);
        const action = completes ? ACTIONS.complete : ACTIONS.advance;
        return done(rollout, { action, entity: entity(rollout), details: details({ fromStep: from, before: written.before, after: written.after, toVersion: written.version }) }, written.flagStateVersion);
      }
      case "pause": {
        if (rollout.state !== "running") return notActive();
        settle(context, rollout, "paused", change.at, ACTIONS.pause, change.reason ?? "Paused by hand.");
        return done(rollout, { action: ACTIONS.pause, entity: entity(rollout), details: details({}) });
      }
      case "resume": {
        if (rollout.state !== "paused") return notActive();
        const edited = handEdited(context, rollout);
        if (edited !== undefined) {
          return refused("CONFLICT", `The feature's targeting was edited by hand during the rollout (now version ${edited}, the rollout wrote ${rollout.writtenVersion}): resuming would overwrite that edit. Cancel this rollout and start a new one.`);
        }
        settle(context, rollout, "running", change.at, ACTIONS.resume, null);
        return done(rollout, { action: ACTIONS.resume, entity: entity(rollout), details: details({}) });
      }
      case "cancel": {
        if (!ACTIVE_STATES.has(rollout.state)) return notActive();
        settle(context, rollout, "cancelled", change.at, ACTIONS.cancel, change.reason);
        return done(rollout, { action: ACTIONS.cancel, entity: entity(rollout), details: details({}) });
      }
      case "rollback": {
        if (!ACTIVE_STATES.has(rollout.state)) return notActive();
        const written = writeTargeting(context, environment, rollout, authoredBase(rollout), stampOf(context, change));
        if (!written.ok) return written;
        rollout.writtenVersion = written.version;
        settle(context, rollout, "rolled_back", change.at, ACTIONS.rollback, change.reason ?? "Rolled back by hand.");
        return done(rollout, { action: ACTIONS.rollback, entity: entity(rollout), details: details({ before: written.before, after: written.after, toVersion: written.version }) }, written.flagStateVersion);
      }
    }
  },
};
