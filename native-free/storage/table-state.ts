import type { Change, EncodedValue } from "./record-codec.js";
import { SortedKeyIndex } from "./sorted-key-index.js";

/** The committed contents of one table: a Map for point reads and a sorted index for ranges, kept in step. */
export class TableState {
  readonly values: Map<string, EncodedValue>;
  readonly index: SortedKeyIndex;

  constructor(values = new Map<string, EncodedValue>(), index = new SortedKeyIndex()) {
    this.values = values;
    this.index = index;
  }

  /** A table loaded from a snapshot: keys ascending, values alongside. */
  static fromSorted(keys: string[], values: EncodedValue[]): TableState {
    const map = new Map<string, EncodedValue>();
    for (let i = 0; i < keys.length; i++) map.set(keys[i]!, values[i]!);
    return new TableState(map, SortedKeyIndex.fromSorted(keys));
  }

  /** Applies one committed change. */
  apply(key: string, change: Change): void {
    if (change === null) {
      if (this.values.delete(key)) this.index.delete(key);
      return;
    }
    // One Map operation instead of has() + set(): the size only grows when the key is new.
    const before = this.values.size;
    this.values.set(key, change);
    if (this.values.size !== before) this.index.insert(key);
  }
}
