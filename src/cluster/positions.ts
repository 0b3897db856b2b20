import type { KvStore } from "../storage/kv.js";

/**
 * Where this node is in each replicated stream, kept in the `meta` table and written in the same transaction as
 * what it applied: after a crash the node resumes right after the last message it committed, never applying one
 * twice nor skipping one. A node that joins two stream sets (a region's and the unregioned one,
 * SWITCHYARD_REGION_SERVES_UNPINNED) keeps one StreamPositions per set under distinct keys: `cluster.` for its own
 * region's set (the keys every existing data dir already has), `cluster.unpinned.` for the unregioned set.
 */
export class StreamPositions {
  constructor(
    private readonly store: KvStore,
    private readonly keyPrefix: "cluster" | "cluster.unpinned" = "cluster",
  ) {}

  private get meta() {
    return this.store.table<"meta", number>("meta");
  }

  /** The last applied sequence of a stream (`config`, `tracking`); 0 before the first. */
  applied(stream: "config" | "tracking"): number {
    return this.meta.get(`${this.keyPrefix}.${stream}.applied`) ?? 0;
  }

  /** Inside a write. */
  setApplied(stream: "config" | "tracking", sequence: number): void {
    this.meta.put(`${this.keyPrefix}.${stream}.applied`, sequence);
  }

  /** The stream sequence of the last change this node applied on a configuration subject (optimistic concurrency). */
  subject(subject: string): number {
    return this.meta.get(`${this.keyPrefix}.subject.${subject}`) ?? 0;
  }

  /** Inside a write. */
  setSubject(subject: string, sequence: number): void {
    this.meta.put(`${this.keyPrefix}.subject.${subject}`, sequence);
  }
}
