/** The `backup.create` change: nothing but its audit entry (API.md §13.1: each backup is audited). */
import type { ApplyContext } from "./apply-context.js";
import type { ChangeOf } from "./changes.js";
import type { Applied } from "./outcome.js";

export function applyBackupCreate(_context: ApplyContext, change: ChangeOf<"backup.create">): Applied<"backup.create"> {
  return { ok: true, value: {}, audit: { action: "backup.create", entity: { kind: "store", id: null }, details: { bytes: change.bytes } } };
}
