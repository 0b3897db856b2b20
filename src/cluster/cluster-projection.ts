import { ServiceError } from "../errors/catalogue.js";
import type { ProjectionGate, ProjectionStatus } from "../tracking/projection-driver.js";
import type { ClusterNode } from "./cluster-node.js";
import { AttributeWrites } from "../tracking/attribute-writes.js";

/**
 * Cluster mode's projection gate: the JetStream tracking stream is the log and each node's applier its projector
 * (tracking-stream.ts). A read waits until this node applied every stream up to its end as JetStream holds it when the
 * read begins: what any node acknowledged before it (while JetStream is unreachable it serves what it holds).
 */
export class ClusterProjection implements ProjectionGate {
  /** This node's own acknowledgments: what another node acknowledged reaches evaluation here within the lag bound. */
  readonly attributeWrites: AttributeWrites;

  constructor(
    private readonly node: ClusterNode,
    private readonly limits: { maxLagMs: number; readWaitMs: number },
  ) {
    this.attributeWrites = new AttributeWrites(() => this.caughtUp(), limits.maxLagMs);
  }

  admit(_mayHold: boolean): undefined {
    const { lagMs } = this.status();
    if (lagMs > this.limits.maxLagMs) {
      throw new ServiceError("PROJECTION_BEHIND", `This node applies the tracking log ${Math.round(lagMs)} ms behind (the bound is ${this.limits.maxLagMs} ms); retry later.`, undefined, 1);
    }
    return undefined;
  }

  /** The applier learns of new messages from JetStream itself. */
  appended(): void {}

  caughtUp(): Promise<void> {
    return (async () => {
      const results = await Promise.all(this.node.sets.map((set) => set.trackingCaughtUp(this.limits.readWaitMs)));
      if (!results.every(Boolean)) {
        throw new ServiceError("PROJECTION_BEHIND", "This node has not applied what the cluster acknowledged before this read; retry later (another node may answer).", undefined, 1);
      }
    })();
  }

  status(): ProjectionStatus {
    let lagMs = 0;
    let backlog = 0;
    let position = 0;
    for (const set of this.node.sets) {
      const { pending, lastAppliedReceivedAt, applied } = set.applier;
      backlog += pending;
      position += applied;
      if (pending > 0 && lastAppliedReceivedAt > 0) lagMs = Math.max(lagMs, Date.now() - lastAppliedReceivedAt);
    }
    return { lagMs, backlog, position };
  }
}
