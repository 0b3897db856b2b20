import { key, lastKeyPart, prefixRange, sequenceKeyPart, type KvStore, type KvTable } from "../storage/kv.js";
import { unpackValues } from "../storage/value-encoding.js";

/** The tables written as per-environment append logs, each with its own sequence. */
export type LogTable = "events" | "featureEvents" | "promptEvents" | "feedback" | "entityUpdates";

/**
 * The key parts before the sequence number. The feedback table also holds the feedbackId → sequence index, so its
 * log lives under its own `log` part.
 */
function logPrefix(table: LogTable, environmentId: string): string[] {
  return table === "feedback" ? [environmentId, "log"] : [environmentId];
}

/** A log's table seen as entries of V (or groups of them): the caller names the log whose entries are V. */
function logTable<V>(store: KvStore, table: LogTable): KvTable<V | LogGroup<V>> {
  return store.table(table) as unknown as KvTable<V | LogGroup<V>>;
}

/** The key of one entry of a log. */
export function logKey(table: LogTable, environmentId: string, sequence: number): string {
  return key(...logPrefix(table, environmentId), sequenceKeyPart(sequence));
}

function counterKey(environmentId: string, table: LogTable): string {
  return key(environmentId, "seq", table);
}

/**
 * Hands out sequence numbers inside one write transaction. The counters are read and written in the same
 * transaction as the entries they number, and writers are serialised, so numbers grow strictly in commit order
 * across every request, thread and process; a transaction that rolls back gives its numbers back.
 */
export class SequenceAllocator {
  private readonly last = new Map<LogTable, number>();

  constructor(
    private readonly store: KvStore,
    private readonly environmentId: string,
  ) {}

  /** The next sequence number of a log (the first is 1). */
  next(table: LogTable): number {
    const previous = this.last.get(table) ?? this.store.table("counters").get(counterKey(this.environmentId, table)) ?? 0;
    const sequence = previous + 1;
    this.last.set(table, sequence);
    return sequence;
  }

  /** Stores the counters; call once, at the end of the transaction. */
  save(): void {
    const counters = this.store.table("counters");
    for (const [table, sequence] of this.last) counters.put(counterKey(this.environmentId, table), sequence);
  }
}

/** The sequence number of a log's newest entry (0 when empty), as committed. */
export function lastSequence(store: KvStore, table: LogTable, environmentId: string): number {
  return store.table("counters").get(counterKey(environmentId, table)) ?? 0;
}

export interface LogEntry<V> {
  sequence: number;
  value: V;
}

/**
 * Several consecutive entries of a log stored as one record, under the key of the last one's sequence: what they
 * share once, then each one's other fields as a row. Readers see the entries one by one, each with its own sequence
 * (logEntries expands the group), so cursors and pages are as if each had been written alone. `/features/enabled`
 * stores its `evaluate` events this way: one context and one put per request instead of one per enabled feature.
 */
export interface LogGroup<V> {
  logGroup: {
    shared: Partial<V>;
    fields: (keyof V & string)[];
    /** Each entry's values of `fields`: as arrays, or as their concatenated msgpack encodings (see packValue). */
    rows: unknown[][] | Uint8Array;
    count: number;
  };
}

function isLogGroup<V>(value: unknown): value is LogGroup<V> {
  return typeof value === "object" && value !== null && "logGroup" in value;
}

/** Appends one entry per row as consecutive entries of `table` in one group record. */
export function appendGroup<V>(
  store: KvStore,
  table: LogTable,
  environmentId: string,
  sequences: SequenceAllocator,
  group: LogGroup<V>["logGroup"],
): void {
  let last = 0;
  for (let index = 0; index < group.count; index++) last = sequences.next(table);
  logTable<V>(store, table).put(logKey(table, environmentId, last), { logGroup: group });
}

function groupEntry<V>(group: LogGroup<V>["logGroup"], row: readonly unknown[]): V {
  const entry: Record<string, unknown> = { ...group.shared };
  for (let index = 0; index < group.fields.length; index++) entry[group.fields[index]!] = row[index];
  return entry as V;
}

/**
 * Up to `limit` entries of a log after sequence `after`, in append order, decoded one at a time as the caller asks:
 * a reader that stops early (a page full by size) never decodes the rest. Grouped entries come out one by one.
 */
export function* logEntries<V>(store: KvStore, table: LogTable, environmentId: string, after: number, limit: number): Generator<LogEntry<V>> {
  const prefix = logPrefix(table, environmentId);
  // No limit on the range: a group record holds several entries. The range is read lazily, as entries are taken.
  const range = { start: key(...prefix, sequenceKeyPart(after + 1)), end: prefixRange(...prefix).end };
  let yielded = 0;
  for (const entry of logTable<V>(store, table).range(range)) {
    const sequence = Number(lastKeyPart(entry.key));
    const value = entry.value;
    if (!isLogGroup<V>(value)) {
      if (yielded++ === limit) return;
      yield { sequence, value };
      continue;
    }
    const group = value.logGroup;
    const rows = group.rows instanceof Uint8Array ? (unpackValues(group.rows) as unknown[][]) : group.rows;
    for (let index = 0; index < rows.length; index++) {
      const itemSequence = sequence - rows.length + 1 + index;
      if (itemSequence <= after) continue;
      if (yielded++ === limit) return;
      yield { sequence: itemSequence, value: groupEntry(group, rows[index]!) };
    }
  }
}

/**
 * The entries of a log newest first, decoded one at a time as the caller asks: for readers that look back over a
 * recent stretch (when was a flag last evaluated) and stop at its start.
 */
export function* logEntriesNewestFirst<V>(store: KvStore, table: LogTable, environmentId: string): Generator<V> {
  const range = { ...prefixRange(...logPrefix(table, environmentId)), reverse: true };
  for (const entry of logTable<V>(store, table).range(range)) {
    const value = entry.value;
    if (!isLogGroup<V>(value)) {
      yield value;
      continue;
    }
    const group = value.logGroup;
    const rows = group.rows instanceof Uint8Array ? (unpackValues(group.rows) as unknown[][]) : group.rows;
    for (let index = rows.length - 1; index >= 0; index--) yield groupEntry(group, rows[index]!);
  }
}

/** Up to `limit` entries of a log after sequence `after`, in append order. */
export function readLog<V>(store: KvStore, table: LogTable, environmentId: string, after: number, limit: number): LogEntry<V>[] {
  return [...logEntries<V>(store, table, environmentId, after, limit)];
}

declare module "../storage/kv.js" {
  /** The value types of the tables this room owns (see TableValues). */
  interface TableValues {
    /** Each log's last sequence number, per environment. */
    counters: number;
  }
}
