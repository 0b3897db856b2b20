import { describe, expect, it } from "vitest";
import { ChunkedViews } from "./chunked-views.js";

describe("ChunkedViews", () => {
  it("carves kept views one after another out of one chunk, and starts a new chunk when a room does not fit", () => {
    const views = new ChunkedViews(() => new Uint8Array(10));
    views.room(4).set([1, 2, 3]);
    const first = views.take(3);
    views.room(4).set([4, 5, 6, 7]);
    const second = views.take(4);
    expect(second.buffer).toBe(first.buffer);
    expect(second.byteOffset).toBe(first.byteOffset + 3);
    expect([...first, ...second]).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // 7 of 10 used: a room of 4 goes to a new chunk; what was kept stays as it was.
    const room = views.room(4);
    expect(room.buffer).not.toBe(first.buffer);
    expect(room.byteOffset).toBe(0);
    room.fill(9);
    expect(views.take(2).buffer).toBe(room.buffer);
    expect([...first, ...second]).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("lets a room go unkept: the next room starts at the same place", () => {
    const views = new ChunkedViews(() => new Int32Array(16));
    const unkept = views.room(8);
    const next = views.room(8);
    expect(next.byteOffset).toBe(unkept.byteOffset);
  });
});
