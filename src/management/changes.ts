/**
 * Every management write as a plain, serialisable change. Whatever is random or time-dependent — ids, key digests,
 * password hashes, the time, the actor — is decided before the change is applied, so applying it is deterministic:
 * the same change applied to the same store state gives the same result on every node (cluster mode's replicated
 * configuration log delivers exactly these objects). Clear secrets never appear in a change: only their digests.
 */
import type { Actor } from "../accounts/principal.js";
import type { AdminTokenRecord, MemberRecord, OAuthClientRecord, OAuthCodeRecord, PasswordHash, ResetRecord, SessionRecord, TokenRecord } from "../accounts/account-records.js";
import type { Role } from "../accounts/roles.js";
import type { AnalyticsSettings } from "../analytics/settings.js";
import type { RebuildReport } from "../analytics/rebuild.js";
import type { FeatureChanges } from "../features/feature-repository.js";
import type { OptInScope } from "../features/opt-in-store.js";
import type { EnvironmentFeatureState, FeatureRecord, Prerequisite } from "../features/feature-records.js";
import type { SegmentRecord } from "./segments/segment-records.js";
import type { StageRecord } from "../features/stage-records.js";
import type { AppRecord, EnvironmentRecord } from "../tenancy/tenancy-records.js";
import type { SurveyRule, SurveySettings } from "../surveys/survey-rules.js";
import type { FlagsImportBody, FlagsImportResult } from "./operations/import-plan.js";
import type { EnvironmentPolicy } from "./governance/policy.js";
import type { ChangeRequestRecord, ProposedChange } from "./governance/change-request-records.js";
import type { RolloutRecord, RolloutSettings, StepEvidence } from "./rollouts/rollout-records.js";
import type { DeliveryAttempt, DeliveryRecord, WebhookLease, WebhookRecord } from "./webhooks/webhook-records.js";

/** What a webhook update may change; fields left out keep their value. */
export interface WebhookChanges {
  url?: string;
  events?: string[];
  environments?: string[];
  format?: WebhookRecord["format"];
  description?: string | null;
  enabled?: boolean;
}

export interface StageChanges {
  name?: string;
  order?: number;
  targeting?: StageRecord["targeting"];
}

/** A feature whose targeting a stage wrote: the new version in each environment. */
export interface StagedFeature {
  feature: FeatureRecord;
  environments: { environmentId: string; version: number; flagStateVersion: number }[];
}

export interface SegmentChanges {
  name?: string;
  description?: string | null;
  filter?: unknown;
}

/** A feature targeting version written because a segment it uses changed. */
export interface RetargetedFeature {
  environmentId: string;
  key: string;
  version: number;
  flagStateVersion: number;
}

/** What every change carries besides its own fields. */
export interface ChangeEnvelope {
  /** Random; lets a replicated log drop a retried duplicate. */
  id: string;
  /** ISO 8601; the time every record the change writes is stamped with. */
  at: string;
  actor: Actor;
  /** The client address the change came from; null when made offline (the CLI on the data dir). */
  address: string | null;
  /** What the author said about the change (≤ 500 characters): audit details and history entries carry it. */
  comment?: string;
  /** An owner writing directly where the environment's policy requires approval, and why (audited). */
  bypass?: { reason: string };
}

/** The body of each kind of change, by `type`. */
export interface ChangeBodies {
  "app.create": { app: AppRecord; trackingKeyDigest: string; environments: EnvironmentRecord[] };
  "environment.create": { environment: EnvironmentRecord };
  "key.rotate": { environmentId: string; kind: "publishable" | "secret"; digest: string; hint: string };
  /** `featureId` is used only if the change creates the feature; `createOnly` refuses a key that exists (409). */
  "feature.put": { appId: string; featureKey: string; featureId: string; fields: FeatureChanges; createOnly?: boolean };
  "feature.archive": { appId: string; featureKey: string };
  "rules.put": { environmentId: string; featureKey: string; kind: "targeting" | "config"; list: unknown[] };
  "analytics.settings": { environmentId: string; settings: AnalyticsSettings };
  "analytics.rebuild": { environmentId: string };
  "stage.create": { appId: string; stage: StageRecord };
  /** `reapply`: write the stage's (new) targeting to every feature in it, in every environment. */
  "stage.update": { appId: string; stageId: string; fields: StageChanges; reapply: boolean };
  "stage.delete": { appId: string; stageId: string };
  /** Puts a feature in a stage: its label, and the stage's targeting as a new version in every environment. */
  "feature.stage": { appId: string; featureKey: string; stageId: string };
  "survey.put": { environmentId: string; featureKey: string; settings: SurveySettings };
  "survey.remove": { environmentId: string; featureKey: string };
  "segment.create": { appId: string; segment: SegmentRecord };
  /** A filter change inlines the segment again into every feature targeting that uses it (new versions). */
  "segment.update": { appId: string; segmentId: string; fields: SegmentChanges };
  "segment.delete": { appId: string; segmentId: string };
  /** A `switchyard.flags/v1` document (or an Unleash import) applied as one change (src/management/operations/). */
  "flags.import": FlagsImportBody;
  /** An online backup was taken (API.md §13.1): only its audit entry. */
  "backup.create": { bytes: number };
  /** An end user's opt-in choice (`POST /flags/opt-in`): not a management write, but it moves flagStateVersion, so
   * in cluster mode it travels through the configuration log like one. Not audited. `entityId`: the user's or
   * company's id (`id` is the change's own). */
  "opt-in.set": { environmentId: string; appId: string; featureKey: string; scope: OptInScope; entityId: string; optedIn: boolean };
  "member.create": { member: MemberRecord };
  "member.update": { memberId: string; name?: string; role?: Role; password?: PasswordHash };
  "member.remove": { memberId: string };
  "password-reset.issue": { digest: string; reset: ResetRecord };
  "password-reset.complete": { digest: string; password: PasswordHash };
  "token.create": { digest: string; token: TokenRecord };
  "token.revoke": { tokenId: string };
  /** `prune`: digests of the member's sessions found expired when signing in; `replaces`: the session the browser held. */
  "session.create": { digest: string; session: SessionRecord; prune: string[]; replaces: string | null };
  "session.revoke": { digest: string };
  "sign-in.fail": { email: string; memberId: string | null };
  /** Moves a session's `lastSeenAt` or a token's `lastUsedAt` to `at`. Bookkeeping, not audited. */
  "credential.touch": { credential: "session" | "token"; digest: string };
  "admin-token.rotate": { digest: string; hint: string };
  "admin-token.disable": Record<string, never>;
  /** An editor registering itself for the MCP OAuth flow (RFC 7591). Bookkeeping, not audited: anyone may register. */
  "oauth-client.register": { client: OAuthClientRecord };
  /** A member approving an editor: a one-time authorization code. */
  "oauth-code.issue": { digest: string; code: OAuthCodeRecord };
  /** The editor redeeming that code (PKCE checked by the route): the code goes, an expiring API token comes. */
  "oauth-code.redeem": { codeDigest: string; tokenDigest: string; token: TokenRecord };
  /** The kill switch of a feature in one environment (API.md §15). */
  "feature.enabled": { environmentId: string; featureKey: string; enabled: boolean };
  /** A feature's prerequisites in one environment (API.md §15), checked against the graph when applied. */
  "feature.prerequisites": { environmentId: string; featureKey: string; prerequisites: Prerequisite[] };
  /**
   * Copies a feature's targeting (as saved) and config from one environment to another of its app, read when it
   * applies: one version of each that differs, one flagStateVersion step.
   */
  "feature.promote": { fromEnvironmentId: string; toEnvironmentId: string; featureKey: string };
  /** Fields left out keep their value. */
  "policy.put": { environmentId: string; policy: Partial<EnvironmentPolicy> };
  /** `requestId` decided by the route; the base versions are read when it applies. */
  "change-request.create": { environmentId: string; requestId: string; title: string; description: string | null; changes: ProposedChange[]; scheduledAt: string | null };
  /** Fields left out keep their value; `changes` given are based on the versions current when it applies. */
  "change-request.update": { environmentId: string; requestId: string; title?: string; description?: string | null; changes?: ProposedChange[]; scheduledAt?: string | null };
  "change-request.review": { environmentId: string; requestId: string; decision: "approve" | "reject"; comment: string | null; revision: number | null };
  "change-request.apply": { environmentId: string; requestId: string };
  "change-request.cancel": { environmentId: string; requestId: string };
  /** The scheduler firing a scheduled request at (or after) its time; `at` is the real time it fired. */
  "change-request.fire": { environmentId: string; requestId: string };
  /** A guarded rollout (API.md §17) starts: its first step's targeting is written. `rolloutId` decided by the route. */
  "rollout.start": { environmentId: string; featureKey: string; rolloutId: string; settings: RolloutSettings };
  /**
   * A rollout moves. `expected`: the state and step the driver decided on (null from a person): a rollout found
   * elsewhere is left alone. `evidence`: what the step had seen, stored with it.
   */
  "rollout.transition": {
    environmentId: string;
    rolloutId: string;
    action: "advance" | "pause" | "resume" | "cancel" | "rollback";
    expected: { state: RolloutRecord["state"]; step: number } | null;
    reason: string | null;
    evidence: StepEvidence | null;
  };
  /**
   * A webhook (API.md §16), its signing secret decided by the route: an HMAC key has to travel and be stored as
   * itself to sign on every node (docs/SECURITY.md). Only the audit entry and the answers leave it out.
   */
  "webhook.create": { webhook: Omit<WebhookRecord, "sequence" | "lease" | "previousSecret" | "updatedAt"> };
  "webhook.update": { appId: string; webhookId: string; fields: WebhookChanges };
  "webhook.delete": { appId: string; webhookId: string };
  /** The new secret; the old one keeps signing for 24 h from the change's time. */
  "webhook.rotate-secret": { appId: string; webhookId: string; secret: string };
  /** Queues a `webhook.test` event for this webhook alone. */
  "webhook.test": { appId: string; webhookId: string };
  /** Queues a delivered or failed delivery again (same id), behind what is queued. */
  "webhook.redeliver": { appId: string; webhookId: string; deliveryId: string };
  /**
   * A node asking to be the one that attempts this webhook's deliveries until `until` (decided before submission):
   * granted when no other node holds an unexpired lease at the change's time. Bookkeeping, not audited.
   */
  "webhook.claim": { appId: string; webhookId: string; nodeId: string; until: string };
  /**
   * One attempt's result as the attempting node saw it, and what follows (decided by that node: delivered, retry
   * at `nextAttemptAt`, or failed); `leaseUntil` extends its lease. Bookkeeping, not audited.
   */
  "webhook.attempt": {
    appId: string;
    webhookId: string;
    deliveryId: string;
    nodeId: string;
    attempt: DeliveryAttempt;
    outcome: "delivered" | "retry" | "failed";
    nextAttemptAt: string | null;
    leaseUntil: string;
  };
}

/** What applying each kind of change answers with. */
export interface ChangeResults {
  "app.create": { app: AppRecord; environments: EnvironmentRecord[] };
  "environment.create": { environment: EnvironmentRecord };
  "key.rotate": { environment: EnvironmentRecord };
  "feature.put": { feature: FeatureRecord; created: boolean };
  "feature.archive": { feature: FeatureRecord };
  "rules.put": { state: EnvironmentFeatureState; flagStateVersion: number };
  "analytics.settings": { settings: AnalyticsSettings };
  "analytics.rebuild": { report: RebuildReport };
  "stage.create": { stage: StageRecord };
  "stage.update": { stage: StageRecord; reapplied: StagedFeature[] };
  "stage.delete": { stage: StageRecord };
  "feature.stage": StagedFeature;
  "survey.put": { survey: SurveyRule; created: boolean };
  "survey.remove": { survey: SurveyRule };
  "segment.create": { segment: SegmentRecord };
  "segment.update": { segment: SegmentRecord; retargeted: RetargetedFeature[] };
  "segment.delete": { segment: SegmentRecord };
  "flags.import": FlagsImportResult;
  "backup.create": Record<string, never>;
  "opt-in.set": { flagStateVersion: number; changed: boolean };
  "member.create": { member: MemberRecord };
  "member.update": { member: MemberRecord };
  "member.remove": { member: MemberRecord };
  "password-reset.issue": { reset: ResetRecord };
  "password-reset.complete": { member: MemberRecord };
  "token.create": { token: TokenRecord };
  "token.revoke": { token: TokenRecord };
  "session.create": { session: SessionRecord; member: MemberRecord };
  "session.revoke": { revoked: boolean };
  "sign-in.fail": Record<string, never>;
  "credential.touch": { touched: boolean };
  "admin-token.rotate": { adminToken: AdminTokenRecord };
  "admin-token.disable": { adminToken: AdminTokenRecord };
  "oauth-client.register": { client: OAuthClientRecord };
  "oauth-code.issue": { code: OAuthCodeRecord };
  "oauth-code.redeem": { token: TokenRecord };
  "feature.enabled": { enabled: boolean; version: number; flagStateVersion: number; changed: boolean };
  "feature.prerequisites": { prerequisites: Prerequisite[]; version: number; flagStateVersion: number; changed: boolean };
  /** The versions in the target after the copy; `changed` false when it already held the same (nothing written). */
  "feature.promote": { targetingVersion: number; configVersion: number; flagStateVersion: number; changed: boolean; wrote: ("targeting" | "config")[] };
  "policy.put": { policy: EnvironmentPolicy };
  "change-request.create": { changeRequest: ChangeRequestRecord };
  "change-request.update": { changeRequest: ChangeRequestRecord };
  "change-request.review": { changeRequest: ChangeRequestRecord };
  "change-request.apply": { changeRequest: ChangeRequestRecord; flagStateVersion: number };
  "change-request.cancel": { changeRequest: ChangeRequestRecord };
  /** `applied` false: the request was not due or not scheduled any more (a duplicate firing), or it was suspended. */
  "change-request.fire": { changeRequest: ChangeRequestRecord | null; applied: boolean };
  "rollout.start": { rollout: RolloutRecord; applied: boolean };
  /** `applied` false: the rollout had left the expected state or step (a duplicate decision). */
  "rollout.transition": { rollout: RolloutRecord; applied: boolean };
  "webhook.create": { webhook: WebhookRecord };
  "webhook.update": { webhook: WebhookRecord; cancelled: number };
  "webhook.delete": { webhook: WebhookRecord };
  "webhook.rotate-secret": { webhook: WebhookRecord };
  "webhook.test": { delivery: DeliveryRecord };
  "webhook.redeliver": { delivery: DeliveryRecord };
  /** `granted` false: another node holds the lease (its `lease` is given). */
  "webhook.claim": { granted: boolean; lease: WebhookLease | null };
  /** `recorded` false: the delivery is no longer waiting (the webhook was deleted or disabled meanwhile). */
  "webhook.attempt": { recorded: boolean; delivery: DeliveryRecord | null };
}

export type ChangeType = keyof ChangeBodies;

/** One change of a given type. */
export type ChangeOf<T extends ChangeType> = ChangeEnvelope & { type: T } & ChangeBodies[T];

/** Any management change. */
export type ManagementChange = { [T in ChangeType]: ChangeOf<T> }[ChangeType];

export const CHANGE_TYPES: readonly ChangeType[] = [
  "app.create",
  "environment.create",
  "key.rotate",
  "feature.put",
  "feature.archive",
  "rules.put",
  "analytics.settings",
  "analytics.rebuild",
  "stage.create",
  "stage.update",
  "stage.delete",
  "feature.stage",
  "survey.put",
  "survey.remove",
  "segment.create",
  "segment.update",
  "segment.delete",
  "flags.import",
  "backup.create",
  "opt-in.set",
  "member.create",
  "member.update",
  "member.remove",
  "password-reset.issue",
  "password-reset.complete",
  "token.create",
  "token.revoke",
  "session.create",
  "session.revoke",
  "sign-in.fail",
  "credential.touch",
  "admin-token.rotate",
  "admin-token.disable",
  "oauth-client.register",
  "oauth-code.issue",
  "oauth-code.redeem",
  "feature.enabled",
  "feature.prerequisites",
  "feature.promote",
  "policy.put",
  "change-request.create",
  "change-request.update",
  "change-request.review",
  "change-request.apply",
  "change-request.cancel",
  "change-request.fire",
  "rollout.start",
  "rollout.transition",
  "webhook.create",
  "webhook.update",
  "webhook.delete",
  "webhook.rotate-secret",
  "webhook.test",
  "webhook.redeliver",
  "webhook.claim",
  "webhook.attempt",
];
