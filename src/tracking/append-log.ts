import { key, lastKeyPart, prefixRange, sequenceKeyPart, type KvStore } from "../storage/kv.js";

/** The tables written as per-environment append logs, each with its own sequence. */
export type LogTable = "events" | "featureEvents" | "promptEvents" | "feedback";

/**
 * The key parts before the sequence number. The feedback table also holds the feedbackId → sequence index, so its
 * log lives under its own `log` part.
 */
function logPrefix(table: LogTable, environmentId: string): string[] {
  return table === "feedback" ? [environmentId, "log"] : [environmentId];
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
    const previous = this.last.get(table) ?? this.store.table<number>("counters").get(counterKey(this.environmentId, table)) ?? 0;
    const sequence = previous + 1;
    this.last.set(table, sequence);
    return sequence;
  }

  /** Stores the counters; call once, at the end of the transaction. */
  save(): void {
    const counters = this.store.table<number>("counters");
    for (const [table, sequence] of this.last) counters.put(counterKey(this.environmentId, table), sequence);
  }
}

export interface LogEntry<V> {
  sequence: number;
  value: V;
}

/**
 * Up to `limit` entries of a log after sequence `after`, in append order, decoded one at a time as the caller asks:
 * a reader that stops early (a page full by size) never decodes the rest.
 */
export function* logEntries<V>(store: KvStore, table: LogTable, environmentId: string, after: number, limit: number): Generator<LogEntry<V>> {
  const prefix = logPrefix(table, environmentId);
  const range = {
    start: key(...prefix, sequenceKeyPart(after + 1)),
    end: prefixRange(...prefix).end,
    ...(Number.isFinite(limit) ? { limit } : {}),
  };
  for (const entry of store.table<V>(table).range(range)) yield { sequence: Number(lastKeyPart(entry.key)), value: entry.value };
}

/** Up to `limit` entries of a log after sequence `after`, in append order. */
export function readLog<V>(store: KvStore, table: LogTable, environmentId: string, after: number, limit: number): LogEntry<V>[] {
  return [...logEntries<V>(store, table, environmentId, after, limit)];
}
