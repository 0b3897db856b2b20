import type { KvStore } from "../storage/kv.js";
import { ChangeApplier } from "./apply.js";
import type { ChangeOf, ChangeType, ManagementChange } from "./changes.js";
import type { ChangeOutcome } from "./outcome.js";

/** Runs after a change was applied (and committed) on this node, in log order. */
export type AppliedListener = (change: ManagementChange, outcome: Extract<ChangeOutcome, { ok: true }>) => void;

/**
 * Where management routes send their changes. Standalone, a change is applied here and now; in cluster mode
 * (API.md §11) it is published to the replicated configuration log and applied by every node in log order, and
 * `submit` resolves once this node applied it (read-your-writes). Either way the answer is what apply returned.
 */
export interface ManagementLog {
  submit<T extends ChangeType>(change: ChangeOf<T>): Promise<ChangeOutcome<T>>;
  /** Observers of applied changes: SSE announcements, the key index, the admin token. */
  onApplied(listener: AppliedListener): () => void;
}

/** The standalone log: one store transaction per change (group-committed with the turn's other writes). */
export class LocalManagementLog implements ManagementLog {
  private readonly applier: ChangeApplier;
  private readonly listeners = new Set<AppliedListener>();

  constructor(private readonly store: KvStore) {
    this.applier = new ChangeApplier(store);
  }

  async submit<T extends ChangeType>(change: ChangeOf<T>): Promise<ChangeOutcome<T>> {
    const outcome = await this.store.write(() => this.applier.apply(change));
    if (outcome.ok) for (const listener of this.listeners) listener(change as ManagementChange, outcome);
    return outcome;
  }

  onApplied(listener: AppliedListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
