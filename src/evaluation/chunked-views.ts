/**
 * Typed-array views carved one after another out of shared chunks, so that views made one after another lie side by
 * side in memory: reading them in about that order then misses the caches far less than reading views of buffers of
 * their own (rollout prefixes and answer items, see rollout-hasher.ts and answer-writer.ts). A chunk is freed only when
 * no view of it is left, so views from one ChunkedViews should live about as long as one another.
 */
export class ChunkedViews<A extends Int32Array | Uint8Array> {
  private chunk: A;
  private used = 0;

  constructor(private readonly newChunk: () => A) {
    this.chunk = newChunk();
  }

  /**
   * Room for up to `length` elements (at most a chunk's): at the end of the current chunk, or at the start of a new
   * one. Nothing is kept until take().
   */
  room(length: number): A {
    if (this.used + length > this.chunk.length) {
      this.chunk = this.newChunk();
      this.used = 0;
    }
    return this.chunk.subarray(this.used, this.used + length) as A;
  }

  /** Keeps the first `length` elements of the last room (written by the caller) and answers them. */
  take(length: number): A {
    const view = this.chunk.subarray(this.used, this.used + length) as A;
    this.used += length;
    return view;
  }
}
