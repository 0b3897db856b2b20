import { AccountRepository } from "../accounts/account-repository.js";
import { AuditLog } from "../accounts/audit-log.js";
import { FeatureRepository } from "../features/feature-repository.js";
import type { KvStore } from "../storage/kv.js";
import { TenancyRepository } from "../tenancy/tenancy-repository.js";
import { ACCOUNT_APPLIERS } from "./apply-accounts.js";
import { CONFIGURATION_APPLIERS } from "./apply-configuration.js";
import { STAGE_APPLIERS } from "./apply-stages.js";
import { StageRepository } from "../features/stage-repository.js";
import { OAUTH_APPLIERS } from "./apply-oauth.js";
import { SURVEY_APPLIERS } from "./apply-surveys.js";
import { SegmentRepository } from "./segments/segment-repository.js";
import { SEGMENT_APPLIERS } from "./apply-segments.js";
import type { ApplyContext, Appliers } from "./apply-context.js";
import { applyFlagsImport } from "./apply-import.js";
import { applyBackupCreate } from "./apply-backup-audit.js";
import type { ChangeOf, ChangeType, ManagementChange } from "./changes.js";
import { approvalHold } from "./governance/approval-gate.js";
import { GOVERNANCE_APPLIERS } from "./governance/apply-governance.js";
import { CHANGE_REQUEST_APPLIERS } from "./governance/apply-change-requests.js";
import { RELEASE_FLOW_APPLIERS } from "./governance/apply-release-flow.js";
import type { Applied, ChangeOutcome } from "./outcome.js";
import { ROLLOUT_APPLIERS } from "./rollouts/apply-rollouts.js";
import { WEBHOOK_APPLIERS } from "./webhooks/apply-webhooks.js";
import { eventsOfChange } from "./webhooks/change-events.js";
import { queueRaisedEvents } from "./webhooks/webhook-outbox.js";

const APPLIERS: Appliers = { ...CONFIGURATION_APPLIERS, ...STAGE_APPLIERS, ...SEGMENT_APPLIERS, ...SURVEY_APPLIERS, ...ACCOUNT_APPLIERS, ...OAUTH_APPLIERS, "flags.import": applyFlagsImport, "backup.create": applyBackupCreate, ...GOVERNANCE_APPLIERS, ...CHANGE_REQUEST_APPLIERS, ...WEBHOOK_APPLIERS, ...ROLLOUT_APPLIERS, ...RELEASE_FLOW_APPLIERS };

/**
 * The one place management changes are applied. `apply` runs inside a store write transaction (the caller's: the
 * standalone log's `store.write`, or a cluster node's applier beside its "last applied sequence"), performs the
 * change and appends its audit entry in that same transaction. It reads only the change and the store — no clock,
 * no randomness — so every node that applies the same changes in the same order holds the same data.
 */
export class ChangeApplier {
  private readonly repositories: Omit<ApplyContext, "auditCursor">;

  constructor(store: KvStore) {
    this.repositories = {
      store,
      tenancy: new TenancyRepository(store),
      features: new FeatureRepository(store),
      stages: new StageRepository(store),
      segments: new SegmentRepository(store),
      accounts: new AccountRepository(store),
      audit: new AuditLog(store),
    };
  }

  /** Inside a write transaction: applies `change`, or refuses it having written nothing. */
  apply<T extends ChangeType>(change: ChangeOf<T>): ChangeOutcome<T> {
    const { audit } = this.repositories;
    let cursor: string | undefined;
    const context: ApplyContext = { ...this.repositories, auditCursor: () => (cursor ??= audit.reserve()) };
    // The map is keyed by type, so this applier takes exactly this change; TypeScript cannot see through the index.
    const applier = APPLIERS[change.type] as unknown as (context: ApplyContext, change: ChangeOf<T>) => Applied<T>;
    // Before anything is written: a direct write to an environment whose policy requires approval is held here.
    const held = approvalHold(context, change as ManagementChange);
    if (held !== undefined && held !== "bypassed") return { ok: false, error: held };
    const { result: applied, writes } = this.repositories.features.recordRulesWrites(() => applier(context, change));
    if (!applied.ok) return applied;
    if (applied.audit) {
      const { comment } = change;
      const bypass = held === "bypassed" ? change.bypass : undefined;
      audit.write({
        cursor: context.auditCursor(),
        at: change.at,
        actor: change.actor,
        action: applied.audit.action,
        entity: applied.audit.entity,
        details: { ...applied.audit.details, ...(comment !== undefined ? { comment } : {}), ...(bypass !== undefined ? { bypass: true, reason: bypass.reason } : {}) },
        address: change.address,
      });
    }
    // The webhook deliveries this change causes, queued in its own transaction: committed with it or not at all.
    queueRaisedEvents(this.repositories.store, { id: change.id, at: change.at, actor: change.actor }, eventsOfChange(applied.audit, writes));
    return {
      ok: true,
      value: applied.value,
      auditCursor: cursor ?? null,
      effects: { flagStates: applied.effects?.flagStates ?? [], keys: applied.effects?.keys ?? null },
    };
  }
}
