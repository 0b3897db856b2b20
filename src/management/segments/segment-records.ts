/** A segment (API.md §10): a named set of companies, defined by a filter over company attributes. */
export interface SegmentRecord {
  id: string;
  name: string;
  description: string | null;
  /**
   * A filter tree of the five SDK filter types over `company.*` fields, plus `{type: "segment", segmentId}` nodes
   * naming other segments of the same app.
   */
  filter: unknown;
  createdAt: string;
  updatedAt: string;
}

/** The sixth filter type, known to the management API only: replaced by the segment's own tree before serving. */
export interface SegmentFilter {
  type: "segment";
  segmentId: string;
}

declare module "../../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    segments: SegmentRecord;
  }
}
