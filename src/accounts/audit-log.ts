import { key, lastKeyPart, prefixRange, sequenceKeyPart, type KvStore } from "../storage/kv.js";
import { decodeCursor, encodeCursor } from "../storage/cursor.js";
import type { AuditEntry } from "./account-records.js";

const COUNTER = "audit";

/** What `GET /admin/audit` may filter on. */
export interface AuditFilter {
  /** Entity kind (`feature`, `member`, …). */
  entity?: string;
  /** `admin`, `anonymous`, a member id (their sessions and tokens alike) or a token id. */
  actor?: string;
  /** The entity's key (a feature's key: its feature, targeting and config entries). */
  key?: string;
  /** Entries at or before this instant (ISO 8601) only. */
  until?: string;
}

/**
 * The audit log: one entry per management change, appended in the change's own transaction. Entries are keyed
 * `seq␀<sequence>`; `actor␀<id>␀<sequence>` and `entity␀<kind>␀<sequence>` index them for the filters, so a
 * filtered page reads only matching entries.
 */
export class AuditLog {
  constructor(private readonly store: KvStore) {}

  private get entries() {
    return this.store.table<"audit", AuditEntry>("audit");
  }
  private get index() {
    return this.store.table<"audit", true>("audit");
  }
  private get counters() {
    return this.store.table("counters");
  }

  /** Inside a write: the cursor the next entry will take (taken now: later reservations get later cursors). */
  reserve(): string {
    const sequence = (this.counters.get(COUNTER) ?? 0) + 1;
    this.counters.put(COUNTER, sequence);
    return encodeCursor(sequence);
  }

  /** Inside a write: stores an entry under a reserved cursor. */
  write(entry: AuditEntry): void {
    const part = sequenceKeyPart(decodeCursor(entry.cursor));
    this.entries.put(key("seq", part), entry);
    for (const actorId of actorIds(entry)) this.index.put(key("actor", actorId, part), true);
    this.index.put(key("entity", entry.entity.kind, part), true);
  }

  get(cursor: string): AuditEntry | undefined {
    return this.entries.get(key("seq", sequenceKeyPart(decodeCursor(cursor))));
  }

  /**
   * Entries after `after` in append order, at most `limit`; `next` as for the other logs (API.md §6). Newest first
   * (`newestFirst`), `after` continues with the entries older than it.
   */
  page(filter: AuditFilter, after: string | undefined, limit: number, newestFirst = false): { entries: AuditEntry[]; next: string } {
    const from = decodeCursor(after);
    const bound = sequenceKeyPart(newestFirst ? from : from + 1);
    const entries: AuditEntry[] = [];
    const keep = (entry: AuditEntry) => (filter.key === undefined || entry.entity.key === filter.key) && (filter.until === undefined || entry.at <= filter.until);
    // Newest first from the start: no upper bound; after a cursor: below it.
    const span = (prefix: { start: string; end: string }, ...parts: string[]) =>
      newestFirst ? { start: prefix.start, end: after === undefined ? prefix.end : key(...parts, bound), reverse: true } : { start: key(...parts, bound), end: prefix.end };
    if (filter.actor === undefined && filter.entity === undefined) {
      for (const entry of this.entries.range(span(prefixRange("seq"), "seq"))) {
        if (!keep(entry.value)) continue;
        entries.push(entry.value);
        if (entries.length >= limit) break;
      }
    } else {
      // Walk the narrower index the filter names; check the other filter on each entry.
      const [indexName, indexValue] = filter.actor !== undefined ? ["actor", filter.actor] : ["entity", filter.entity!];
      for (const hit of this.index.range(span(prefixRange(indexName, indexValue), indexName, indexValue))) {
        const entry = this.entries.get(key("seq", lastKeyPart(hit.key)));
        if (!entry || (filter.entity !== undefined && entry.entity.kind !== filter.entity) || !keep(entry)) continue;
        entries.push(entry);
        if (entries.length >= limit) break;
      }
    }
    return { entries, next: entries.length > 0 ? entries[entries.length - 1]!.cursor : encodeCursor(from) };
  }
}

/** The ids an entry is found under with `actor=`: the actor's own, and for a token its member's. */
function actorIds(entry: AuditEntry): string[] {
  return entry.actor.kind === "token" ? [entry.actor.id, entry.actor.memberId] : [entry.actor.id];
}
