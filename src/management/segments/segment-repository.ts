import { key, prefixRange, type KvStore } from "../../storage/kv.js";
import type { SegmentRecord } from "./segment-records.js";

/** Segments per app, by id; writes run inside the management apply transaction. */
export class SegmentRepository {
  constructor(private readonly store: KvStore) {}

  private get segments() {
    return this.store.table("segments");
  }

  listSegments(appId: string): SegmentRecord[] {
    return [...this.segments.range(prefixRange(appId))].map((entry) => entry.value).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  getSegment(appId: string, segmentId: string): SegmentRecord | undefined {
    return this.segments.get(key(appId, segmentId));
  }

  /** A segment by id, or else by name (people and the CLI name segments). */
  findSegment(appId: string, idOrName: string): SegmentRecord | undefined {
    return this.getSegment(appId, idOrName) ?? this.listSegments(appId).find((segment) => segment.name === idOrName);
  }

  putSegment(appId: string, segment: SegmentRecord): void {
    this.segments.put(key(appId, segment.id), segment);
  }

  removeSegment(appId: string, segmentId: string): void {
    this.segments.remove(key(appId, segmentId));
  }
}
