import type { KvStore } from "../storage/kv.js";

/**
 * Where this node is in each replicated stream, kept in the `meta` table and written in the same transaction as
 * what it applied: after a crash the node resumes right after the last message it committed, never applying one
 * twice nor skipping one.
 */
export class StreamPositions {
  constructor(private readonly store: KvStore) {}

  private get meta() {
    return this.store.table<number>("meta");
  }

  /** The last applied sequence of a stream (`config`, `tracking`); 0 before the first. */
  applied(stream: "config" | "tracking"): number {
    return this.meta.get(`cluster.${stream}.applied`) ?? 0;
  }

  /** Inside a write. */
  setApplied(stream: "config" | "tracking", sequence: number): void {
    this.meta.put(`cluster.${stream}.applied`, sequence);
  }

  /** The stream sequence of the last change this node applied on a configuration subject (optimistic concurrency). */
  subject(subject: string): number {
    return this.meta.get(`cluster.subject.${subject}`) ?? 0;
  }

  /** Inside a write. */
  setSubject(subject: string, sequence: number): void {
    this.meta.put(`cluster.subject.${subject}`, sequence);
  }
}
