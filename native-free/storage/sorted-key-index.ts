import { compareUtf8 } from "./compare-utf8.js";

/**
 * Keys past this many in one chunk split it in two. Small enough that a splice inside a chunk is a short memmove,
 * large enough that the chunk list itself stays short (a million keys is about two thousand chunks).
 */
const MAX_CHUNK = 1024;

interface Position {
  chunk: number;
  index: number;
}

/**
 * The ordered key set of one table: a list of sorted chunks (the shape of Python's sortedcontainers), so a key
 * inserted in the middle moves at most one chunk's worth of references, while the common case, a key above every
 * other (append logs, sequence keys), is a push onto the last chunk. Keys are compared by UTF-8 bytes.
 *
 * Presence is the caller's business: the table's Map says whether a key exists, and only then does it call
 * `insert` (absent keys) or `delete` (present ones).
 */
export class SortedKeyIndex {
  private chunks: string[][] = [];
  private count = 0;
  /** Bumped on every change, so a range walk that spans a change re-finds its place instead of skipping keys. */
  private version = 0;

  /** Builds an index from keys already in ascending order (a snapshot's). */
  static fromSorted(keys: readonly string[]): SortedKeyIndex {
    const index = new SortedKeyIndex();
    for (let i = 0; i < keys.length; i += MAX_CHUNK) index.chunks.push(keys.slice(i, i + MAX_CHUNK));
    index.count = keys.length;
    return index;
  }

  get size(): number {
    return this.count;
  }

  /** Adds a key the index does not hold. */
  insert(key: string): void {
    this.version++;
    this.count++;
    const last = this.chunks[this.chunks.length - 1];
    if (!last) {
      this.chunks.push([key]);
      return;
    }
    if (compareUtf8(key, last[last.length - 1]!) > 0) {
      // Appends leave full chunks full and start a new one, so append-only tables never split.
      if (last.length >= MAX_CHUNK) this.chunks.push([key]);
      else last.push(key);
      return;
    }
    const chunkIndex = this.chunkFor(key);
    const chunk = this.chunks[chunkIndex]!;
    chunk.splice(lowerBoundIn(chunk, key), 0, key);
    if (chunk.length > MAX_CHUNK) this.chunks.splice(chunkIndex + 1, 0, chunk.splice(chunk.length >>> 1));
  }

  /** Removes a key the index holds. */
  delete(key: string): void {
    const chunkIndex = this.chunkFor(key);
    const chunk = this.chunks[chunkIndex];
    if (!chunk) return;
    const at = lowerBoundIn(chunk, key);
    if (chunk[at] !== key) return;
    this.version++;
    this.count--;
    chunk.splice(at, 1);
    if (chunk.length === 0) this.chunks.splice(chunkIndex, 1);
  }

  /** Every key, ascending, as one new array. */
  toArray(): string[] {
    return this.chunks.flat();
  }

  /** Keys in [start, end), ascending or descending, at most `limit` of them. */
  *keys(start: string | undefined, end: string | undefined, reverse: boolean, limit: number): Generator<string> {
    if (limit <= 0) return;
    if (start !== undefined && end !== undefined && compareUtf8(start, end) >= 0) return;
    let yielded = 0;
    let at: Position | undefined = reverse ? this.before(end) : this.atOrAfter(start);
    while (at) {
      const key = this.chunks[at.chunk]![at.index]!;
      if (reverse ? start !== undefined && compareUtf8(key, start) < 0 : end !== undefined && compareUtf8(key, end) >= 0) return;
      const seenVersion = this.version;
      yield key;
      if (++yielded >= limit) return;
      // If the index changed while the caller held this walk, positions moved: find the place again from the key
      // just handed out rather than stepping from a stale position.
      if (seenVersion !== this.version) at = reverse ? this.before(key) : this.after(key);
      else at = reverse ? this.previous(at) : this.next(at);
    }
  }

  /** The first chunk whose last key is >= key; chunks.length when the key is above them all. */
  private chunkFor(key: string): number {
    let low = 0;
    let high = this.chunks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const chunk = this.chunks[middle]!;
      if (compareUtf8(chunk[chunk.length - 1]!, key) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The first key >= `key` (the first key of all when undefined). */
  private atOrAfter(key: string | undefined): Position | undefined {
    if (this.chunks.length === 0) return undefined;
    if (key === undefined) return { chunk: 0, index: 0 };
    const chunk = this.chunkFor(key);
    if (chunk >= this.chunks.length) return undefined;
    return { chunk, index: lowerBoundIn(this.chunks[chunk]!, key) };
  }

  /** The first key > `key`. */
  private after(key: string): Position | undefined {
    const at = this.atOrAfter(key);
    if (at && this.chunks[at.chunk]![at.index] === key) return this.next(at);
    return at;
  }

  /** The last key < `key` (the last key of all when undefined). */
  private before(key: string | undefined): Position | undefined {
    if (this.chunks.length === 0) return undefined;
    if (key === undefined) {
      const chunk = this.chunks.length - 1;
      return { chunk, index: this.chunks[chunk]!.length - 1 };
    }
    const at = this.atOrAfter(key);
    if (!at) return this.before(undefined);
    return this.previous(at);
  }

  private next(at: Position): Position | undefined {
    if (at.index + 1 < this.chunks[at.chunk]!.length) return { chunk: at.chunk, index: at.index + 1 };
    return at.chunk + 1 < this.chunks.length ? { chunk: at.chunk + 1, index: 0 } : undefined;
  }

  private previous(at: Position): Position | undefined {
    if (at.index > 0) return { chunk: at.chunk, index: at.index - 1 };
    if (at.chunk === 0) return undefined;
    return { chunk: at.chunk - 1, index: this.chunks[at.chunk - 1]!.length - 1 };
  }
}

/** The index of the first key in a sorted chunk that is >= `key`. */
function lowerBoundIn(chunk: readonly string[], key: string): number {
  let low = 0;
  let high = chunk.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareUtf8(chunk[middle]!, key) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}
