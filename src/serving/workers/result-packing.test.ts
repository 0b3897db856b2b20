import { describe, expect, it } from "vitest";
import { ResultArena, unpackResults } from "./result-packing.js";

describe("ResultArena", () => {
  it("gives back every result in job order, whatever order they came in, growing past its first capacity", () => {
    const large = new Uint8Array(200_000).fill(0x61);
    const arena = new ResultArena(4);
    arena.set(2, { status: 200, body: large, headers: { "content-type": "application/json" } });
    arena.set(0, { status: 400, body: '{"success":false,"ü":1}', headers: { "content-type": "application/json", "retry-after": "1" } });
    arena.set(3, { status: 200, body: new Uint8Array([1, 2, 3]), headers: { "content-type": "application/json", "content-encoding": "br" } });
    arena.set(1, { status: 200, body: "first" });
    // A later answer for a position replaces the earlier one (a commit that failed after the evaluation was written).
    arena.set(1, { status: 503, body: "second", headers: { "content-type": "application/json" } });
    const results = unpackResults(arena.finish());
    expect(results.map((result) => result.status)).toEqual([400, 503, 200, 200]);
    expect(results[0]).toEqual({ status: 400, body: '{"success":false,"ü":1}', headers: { "content-type": "application/json", "retry-after": "1" } });
    expect(results[1]!.body).toBe("second");
    expect(Buffer.from(results[2]!.body as Uint8Array).equals(Buffer.from(large))).toBe(true);
    expect(results[3]).toMatchObject({ headers: { "content-encoding": "br" } });
    expect([...(results[3]!.body as Uint8Array)]).toEqual([1, 2, 3]);
  });

  it("leaves text bodies as their UTF-8 bytes when asked (answers that only go to a socket), headers still read", () => {
    const arena = new ResultArena(2);
    arena.set(0, { status: 200, body: '{"flags":[{"key":"ü"}]}', headers: { "content-type": "application/json", etag: '"abc"' } });
    arena.set(1, { status: 200, body: new Uint8Array([1, 2]) });
    const results = unpackResults(arena.finish(), true);
    expect(results[0]!.body).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(results[0]!.body as Uint8Array).toString("utf8")).toBe('{"flags":[{"key":"ü"}]}');
    expect(results[0]!.headers).toEqual({ "content-type": "application/json", etag: '"abc"' });
    expect([...(results[1]!.body as Uint8Array)]).toEqual([1, 2]);
  });

  it("packs an ETag beside the JSON content type without a header record, and any other set as it is", () => {
    const arena = new ResultArena(3);
    arena.set(0, { status: 200, body: "{}", headers: { "content-type": "application/json", etag: '"1-2"' } });
    arena.set(1, { status: 200, body: "{}", headers: { "content-type": "application/json", etag: '"3-4"', vary: "Origin" } });
    arena.set(2, { status: 304, body: "", headers: { etag: '"5-6"' } });
    const packed = arena.finish() as ArrayBuffer;
    const results = unpackResults(packed);
    expect(results.map((result) => result.headers)).toEqual([
      { "content-type": "application/json", etag: '"1-2"' },
      { "content-type": "application/json", etag: '"3-4"', vary: "Origin" },
      { etag: '"5-6"' },
    ]);
    // The first answer's headers cost the ETag's five bytes after its body, not a JSON record.
    expect(new DataView(packed).getUint32(8 + 11)).toBe(5);
  });

  it("keeps a body written into the room it claimed where it is, and copies one that is elsewhere", () => {
    const arena = new ResultArena(3);
    const written = (text: string) => {
      const bytes = Buffer.from(text);
      const start = arena.claim(bytes.length);
      arena.bytes.set(bytes, start);
      return arena.bytes.subarray(start, start + bytes.length);
    };
    const first = written('{"features":{"a":1}}');
    arena.set(0, { status: 200, body: first, headers: { "content-type": "application/json" } });
    // Claimed and then not passed on (a compressed answer took its place): the next body goes over it.
    written("not kept");
    arena.set(1, { status: 200, body: new Uint8Array([9, 8, 7]), headers: { "content-type": "application/json", "content-encoding": "br" } });
    // A claim larger than the buffer grows it; the body written there is kept as well.
    const large = written("x".repeat(100_000));
    arena.set(2, { status: 200, body: large, headers: { "content-type": "application/json" } });
    const results = unpackResults(arena.finish());
    expect(Buffer.from(results[0]!.body as Uint8Array).toString()).toBe('{"features":{"a":1}}');
    expect([...(results[1]!.body as Uint8Array)]).toEqual([9, 8, 7]);
    expect(Buffer.from(results[2]!.body as Uint8Array).toString()).toBe("x".repeat(100_000));
    // Nothing was copied twice: the bytes used are the entries, the three bodies and the second one's headers.
    const headers = JSON.stringify({ "content-type": "application/json", "content-encoding": "br" }).length;
    expect(new DataView(arena.bytes.buffer).getUint32(4)).toBe(8 + 3 * 15 + 20 + 3 + headers + 100_000);
  });
});
