import { closeSync, openSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as zlib from "node:zlib";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { crc32, crc32InJs } from "./crc32.js";
import { encodeFrame, scanFrames } from "./frame.js";

describe("crc32", () => {
  it("gives zlib's CRC-32, also from the JS fallback and when continued", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 300 }), (a, b) => {
        const whole = Buffer.concat([a, b]);
        expect(crc32InJs(whole)).toBe(crc32(whole));
        expect(crc32InJs(b, crc32InJs(a))).toBe(crc32(whole));
        const native = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
        if (native) expect(crc32(whole)).toBe(native(whole));
      }),
    );
    expect(crc32InJs(Buffer.from("123456789"))).toBe(0xcbf43926);
  });
});

describe("frames", () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "switchyard-frame-"));
  });

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function scan(bytes: Buffer): { payloads: string[]; validEnd: number } {
    const path = join(dir, "frames");
    writeFileSync(path, bytes);
    const fd = openSync(path, "r");
    try {
      const payloads: string[] = [];
      const { validEnd } = scanFrames(fd, 0, bytes.length, (payload) => payloads.push(payload.toString()));
      return { payloads, validEnd };
    } finally {
      closeSync(fd);
    }
  }

  it("reads back every whole frame, large ones included, and stops at the first torn or damaged one", () => {
    const frames = ["one", "x".repeat(3 * 1024 * 1024), "three"].map((text) => encodeFrame(Buffer.from(text)));
    const all = Buffer.concat(frames);
    expect(scan(all).payloads.map((p) => p.length)).toEqual([3, 3 * 1024 * 1024, 5]);
    expect(scan(all).validEnd).toBe(all.length);

    const torn = all.subarray(0, all.length - 1);
    expect(scan(torn).payloads).toHaveLength(2);
    expect(scan(torn).validEnd).toBe(frames[0]!.length + frames[1]!.length);

    const flipped = Buffer.from(all);
    flipped[frames[0]!.length + 2]! ^= 1; // the second frame's length
    expect(scan(flipped).payloads).toEqual(["one"]);

    expect(scan(Buffer.concat([frames[0]!, Buffer.alloc(64)])).payloads).toEqual(["one"]);
  });
});
