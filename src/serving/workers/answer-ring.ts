/**
 * A ring of shared memory per worker, through which a batch's packed answers reach the main thread without a buffer
 * changing hands. Moving (transferring) a buffer per batch made each thread count it as new external memory, and V8
 * answered that with full collections — dozens a second at 1,000-feature answers, where the ring needs none.
 *
 * The worker appends each batch as one contiguous region (wrapping to the start when the end is too near) and sends
 * its place in the task's result; the main thread, having written the answers (the front end copies them), releases
 * regions in the order they were sent. Offsets grow without bound modulo 2^32; the ring holds less than 2^31 bytes.
 * When the main thread falls behind and the ring is full, the worker moves a buffer instead (see pool-executor.ts).
 */

/** Control words: [0] bytes released by the main thread (absolute, mod 2^32). */
const CONTROL_BYTES = 8;
/**
 * Regions start on 8-byte boundaries: V8 copies into shared memory word by word only when source and target are
 * equally aligned, and byte by byte otherwise, several times slower (bench/workers/shared-copy.ts; docs/BENCHMARKS.md, "Figures behind the code").
 * Arenas start at offset 0 of their buffers, so an aligned region makes both aligned.
 */
const ALIGNMENT = 8;

/** Where the next region may start after one ending at `end` (absolute, mod 2^32). */
function alignedEnd(end: number): number {
  return ((end + ALIGNMENT - 1) & ~(ALIGNMENT - 1)) >>> 0;
}

export interface RingRegion {
  ring: number;
  /** Absolute offset of the region's first byte (mod 2^32). */
  start: number;
  length: number;
}

export class AnswerRing {
  private readonly control: Int32Array;
  readonly data: Uint8Array;
  /** Worker side: bytes appended so far (absolute, mod 2^32). */
  private written = 0;

  constructor(readonly shared: SharedArrayBuffer) {
    this.control = new Int32Array(shared, 0, CONTROL_BYTES / 4);
    this.data = new Uint8Array(shared, CONTROL_BYTES);
  }

  /** A ring of `capacity` bytes, a power of two (so offsets modulo 2^32 map to places in it consistently). */
  static create(capacity: number): AnswerRing {
    if (capacity < ALIGNMENT || capacity > 2 ** 30 || (capacity & (capacity - 1)) !== 0) throw new RangeError("ring capacity must be a power of two from 8 up to 2^30");
    return new AnswerRing(new SharedArrayBuffer(CONTROL_BYTES + capacity));
  }

  /**
   * Worker side: copies `bytes` in as one region and answers where, or undefined when the ring has no room for it
   * (the main thread has not released enough yet).
   */
  append(index: number, bytes: Uint8Array): RingRegion | undefined {
    const capacity = this.data.length;
    const length = bytes.length;
    const released = Atomics.load(this.control, 0) >>> 0;
    const live = (this.written - released) >>> 0;
    let start = this.written;
    let position = start % capacity;
    if (position + length <= capacity) {
      if (live + length > capacity) return undefined;
    } else {
      // A region never wraps: it starts over at the beginning, the end of the ring left unused. The live bytes lie
      // before `position`: they leave room at the beginning only if they do not wrap themselves.
      const liveStart = released % capacity;
      const room = live === 0 ? capacity : live < capacity && liveStart <= position ? liveStart : 0;
      if (length > room) return undefined;
      start = (start + capacity - position) >>> 0;
      position = 0;
    }
    this.data.set(bytes, position);
    this.written = alignedEnd(start + length);
    return { ring: index, start, length };
  }

  /** Main thread side: the bytes of a region. */
  view(region: RingRegion): Uint8Array {
    const position = region.start % this.data.length;
    return this.data.subarray(position, position + region.length);
  }

  /** Main thread side: everything up to the end of `region` may be written over (release in the order regions came). */
  release(region: RingRegion): void {
    Atomics.store(this.control, 0, alignedEnd(region.start + region.length) | 0);
  }
}
