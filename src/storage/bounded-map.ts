/**
 * A map that holds at most about `maxEntries` entries, dropping the least recently set ones in bulk: two generations,
 * the current one taking new entries until it holds half the bound, when it becomes the previous one and the older
 * generation is dropped whole. A read finds entries of either generation.
 *
 * Not a delete-the-oldest Map: V8 leaves a deleted entry's slot in place until the table is rebuilt, so evicting the
 * first key of a busy Map one at a time makes `keys().next()` step over thousands of holes
 * (docs/BENCHMARKS.md, "Figures behind the code"), where swapping generations costs nothing per entry.
 */
export class BoundedMap<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();
  private readonly generationSize: number;

  constructor(maxEntries: number) {
    this.generationSize = Math.max(1, Math.ceil(maxEntries / 2));
  }

  get(key: K): V | undefined {
    const value = this.current.get(key);
    return value !== undefined ? value : this.previous.get(key);
  }

  set(key: K, value: V): void {
    if (!this.current.has(key) && this.current.size >= this.generationSize) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
    // A stale copy in the previous generation must not come back once this one is dropped or deleted.
    this.previous.delete(key);
  }

  delete(key: K): void {
    this.current.delete(key);
    this.previous.delete(key);
  }

  /** Entries held (at most the bound, rounded up to even). */
  get size(): number {
    return this.current.size + this.previous.size;
  }
}
