import { describe, expect, it } from "vitest";
import { AnswerRing } from "./answer-ring.js";

const bytes = (length: number, fill: number) => new Uint8Array(length).fill(fill);

describe("AnswerRing", () => {
  it("hands regions over in order, wraps without splitting one, and refuses what does not fit until released", () => {
    const worker = AnswerRing.create(64);
    const main = new AnswerRing(worker.shared);
    const first = worker.append(3, bytes(40, 1))!;
    expect(first).toEqual({ ring: 3, start: 0, length: 40 });
    // 24 bytes left at the end, but nothing released: a 30-byte region fits nowhere yet.
    expect(worker.append(3, bytes(30, 2))).toBeUndefined();
    expect([...main.view(first)]).toEqual(Array(40).fill(1));
    main.release(first);
    // Too long for the end of the ring: it starts over at the beginning, after skipping the last 24 bytes.
    const second = worker.append(3, bytes(30, 2))!;
    expect(second.start).toBe(64);
    expect([...main.view(second)]).toEqual(Array(30).fill(2));
    // Released up to 40, written up to 94 and the next region starts on an 8-byte boundary, 96: 8 bytes are free.
    expect(worker.append(3, bytes(9, 3))).toBeUndefined();
    const third = worker.append(3, bytes(8, 3))!;
    expect(third.start).toBe(96);
    expect(worker.append(3, bytes(1, 4))).toBeUndefined();
    main.release(second);
    main.release(third);
    expect(worker.append(3, bytes(64, 5))).toEqual({ ring: 3, start: 128, length: 64 });
    expect(worker.append(3, bytes(65, 6))).toBeUndefined();
  });

  it("only takes powers of two", () => {
    expect(() => AnswerRing.create(100)).toThrow(RangeError);
    expect(() => AnswerRing.create(4)).toThrow(RangeError);
  });
});

describe("AnswerRing under random traffic", () => {
  it("never lets a region be written over before it is released, nor refuses one that fits an empty ring", async () => {
    const fc = (await import("fast-check")).default;
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 1, max: 70 }), fc.constant(0)), { maxLength: 200 }), (steps) => {
        const worker = AnswerRing.create(64);
        const main = new AnswerRing(worker.shared);
        const live: { region: { ring: number; start: number; length: number }; fill: number }[] = [];
        let fill = 0;
        for (const step of steps) {
          if (step === 0) {
            // Release the oldest region, after checking every live one still holds its bytes.
            for (const entry of live) expect(main.view(entry.region).every((byte) => byte === entry.fill)).toBe(true);
            const oldest = live.shift();
            if (oldest) main.release(oldest.region);
            continue;
          }
          fill = (fill % 250) + 1;
          const region = worker.append(0, bytes(step, fill));
          if (region) {
            expect(region.start % 8).toBe(0);
            live.push({ region, fill });
          }
          else if (live.length === 0) expect(step).toBeGreaterThan(64);
        }
        for (const entry of live) expect(main.view(entry.region).every((byte) => byte === entry.fill)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
