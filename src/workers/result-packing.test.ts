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
});
