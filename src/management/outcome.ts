import type { AuditEntity } from "../accounts/account-records.js";
import type { ErrorCode, ErrorData } from "../errors/catalogue.js";
import { ERRORS } from "../errors/catalogue.js";
import type { ChangeResults, ChangeType } from "./changes.js";

/** What an applied change set in motion, for observers on every node (live streams, key index, caches). */
export interface ChangeEffects {
  /** Environments whose flagStateVersion moved, with the new version. */
  flagStates: [environmentId: string, flagStateVersion: number][];
  /** Present when keys changed: the digests that stopped working. */
  keys: { revokedDigests: string[] } | null;
}

/** The outcome of applying a change: its result, or the error it was refused with (nothing written then). */
export type ChangeOutcome<T extends ChangeType = ChangeType> =
  | { ok: true; value: ChangeResults[T]; auditCursor: string | null; effects: ChangeEffects }
  | { ok: false; error: ErrorData };

/** The audit entry an applier asks for, without what the envelope supplies (cursor, time, actor, address). */
export interface AuditRecord {
  action: string;
  entity: AuditEntity;
  details: Record<string, unknown>;
}

/** What one applier returns. `audit` null only for bookkeeping changes (credential.touch). */
export type Applied<T extends ChangeType> =
  | { ok: true; value: ChangeResults[T]; audit: AuditRecord | null; effects?: Partial<ChangeEffects> }
  | { ok: false; error: ErrorData };

/** A refusal decided at apply time (the store no longer holds what the route saw, or a rule such as "keep one owner"). */
export function refused(code: ErrorCode, message?: string): { ok: false; error: ErrorData } {
  return { ok: false, error: { code, message: message ?? ERRORS[code].message } };
}
