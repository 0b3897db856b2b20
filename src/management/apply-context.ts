import type { AccountRepository } from "../accounts/account-repository.js";
import type { AuditLog } from "../accounts/audit-log.js";
import type { FeatureRepository } from "../features/feature-repository.js";
import type { SegmentRepository } from "./segments/segment-repository.js";
import type { StageRepository } from "../features/stage-repository.js";
import type { KvStore } from "../storage/kv.js";
import type { TenancyRepository } from "../tenancy/tenancy-repository.js";
import type { HistoryLink } from "../features/feature-records.js";
import type { ChangeEnvelope, ChangeOf, ChangeType } from "./changes.js";
import type { Applied } from "./outcome.js";

/** What an applier may touch: the repositories' in-transaction writes, inside the change's one transaction. */
export interface ApplyContext {
  store: KvStore;
  tenancy: TenancyRepository;
  features: FeatureRepository;
  stages: StageRepository;
  segments: SegmentRepository;
  accounts: AccountRepository;
  audit: AuditLog;
  /** This change's audit cursor, reserved on first call (after validation: a refused change reserves nothing). */
  auditCursor(): string;
}

/** One applier per change type: validates against the store, then writes; never throws for a refusal. */
export type Appliers = { [T in ChangeType]: (context: ApplyContext, change: ChangeOf<T>) => Applied<T> };

/** Flag-state versions as the effects list them. */
export function flagStateList(versions: Map<string, number>): [string, number][] {
  return [...versions.entries()];
}

/** What history entries of a change record: its audit entry, who, and the author's comment. */
export function historyLink(context: ApplyContext, change: ChangeEnvelope, changeRequestId?: string): HistoryLink {
  return {
    auditCursor: context.auditCursor(),
    actor: change.actor,
    ...(change.comment !== undefined ? { comment: change.comment } : {}),
    ...(changeRequestId !== undefined ? { changeRequestId } : {}),
  };
}
