import type { ChangeOf, ChangeType, ManagementChange } from "../management/changes.js";
import type { AppliedListener, ManagementLog } from "../management/management-log.js";
import type { ChangeOutcome } from "../management/outcome.js";

/**
 * The management log of a region's node that also serves the unpinned apps: a change of an unpinned app goes to
 * the unregioned configuration log (so nodes of no region, and other such nodes, apply it too), every other change
 * to the region's. Each log answers once this node applied the change from its own stream (read-your-writes), with
 * optimistic concurrency on that stream's subjects, exactly as a node of one set does.
 */
export class RoutedManagementLog implements ManagementLog {
  constructor(
    private readonly region: ManagementLog,
    private readonly unregioned: ManagementLog,
    private readonly concernsUnpinnedApp: (change: ManagementChange) => boolean,
  ) {}

  submit<T extends ChangeType>(change: ChangeOf<T>): Promise<ChangeOutcome<T>> {
    return (this.concernsUnpinnedApp(change as ManagementChange) ? this.unregioned : this.region).submit(change);
  }

  onApplied(listener: AppliedListener): () => void {
    const offs = [this.region.onApplied(listener), this.unregioned.onApplied(listener)];
    return () => {
      for (const off of offs) off();
    };
  }
}
