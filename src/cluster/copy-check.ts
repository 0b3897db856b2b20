/**
 * What a node can tell about the copy of a stream (tracking or configuration) that its consumer reads. JetStream
 * promises two things the node can check: a message id is stored once within the duplicate window, and the sequence
 * a publish was acknowledged at holds that publish. nats-server 2.9.10 breaks both after a stream leader is killed
 * -9 under load: its servers' copies of a stream can differ, a message in flight at the kill turning up again later
 * in place of an acknowledged one (reproduced without Switchyard by tools/cluster/replica-check.ts; docs/CLUSTER.md).
 * A node cannot repair its copy; it can refuse to apply a message twice, and say that its copy differs from what was
 * acknowledged.
 */

export interface Divergence {
  sequence: number;
  /** The message id found at `sequence`. */
  found: string;
  /** `duplicate`: `found` was applied before, at `firstSequence`. `replaced`: JetStream acknowledged `expected` to this node at `sequence`. */
  kind: "duplicate" | "replaced";
  firstSequence?: number;
  expected?: string;
}

/** Bounds on what is remembered, whatever the rate: the checks are best effort past them. */
const MAX_REMEMBERED_IDS = 500_000;
const MAX_OWN_ACKNOWLEDGED = 100_000;

export class StreamCopyCheck {
  /** Message ids applied within the duplicate window (by the stream's timestamps), oldest first. */
  private readonly applied = new Map<string, { sequence: number; storedAtMs: number }>();
  /** This node's own publishes that its consumer has not reached yet: sequence → message id. */
  private readonly ownAcknowledged = new Map<number, string>();
  divergences = 0;
  last: Divergence | undefined;

  constructor(
    private readonly duplicateWindowMs: number,
    private readonly onDivergence: (divergence: Divergence) => void,
  ) {}

  /** JetStream acknowledged this node's publish `messageId` at `sequence`. */
  acknowledged(sequence: number, messageId: string): void {
    if (this.ownAcknowledged.size >= MAX_OWN_ACKNOWLEDGED) this.ownAcknowledged.delete(this.ownAcknowledged.keys().next().value!);
    this.ownAcknowledged.set(sequence, messageId);
  }

  /**
   * Checks the message the consumer handed over at `sequence` (each sequence once, in order). False: its id was
   * applied already, so its requests must not be applied again.
   */
  admit(sequence: number, messageId: string | undefined, storedAtMs: number): boolean {
    const expected = this.ownAcknowledged.get(sequence);
    if (expected !== undefined) {
      this.ownAcknowledged.delete(sequence);
      if (messageId !== expected) this.report({ sequence, found: messageId ?? "(none)", kind: "replaced", expected });
    }
    if (messageId === undefined) return true;
    this.forgetBefore(storedAtMs - this.duplicateWindowMs);
    const first = this.applied.get(messageId);
    if (first !== undefined) {
      this.report({ sequence, found: messageId, kind: "duplicate", firstSequence: first.sequence });
      return false;
    }
    if (this.applied.size >= MAX_REMEMBERED_IDS) this.applied.delete(this.applied.keys().next().value!);
    this.applied.set(messageId, { sequence, storedAtMs });
    return true;
  }

  private forgetBefore(cutoffMs: number): void {
    for (const [messageId, entry] of this.applied) {
      if (entry.storedAtMs >= cutoffMs) return;
      this.applied.delete(messageId);
    }
  }

  private report(divergence: Divergence): void {
    this.divergences++;
    this.last = divergence;
    this.onDivergence(divergence);
  }
}
