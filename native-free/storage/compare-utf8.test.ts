import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compareKeys } from "../../src/storage/kv.js";
import { compareUtf8 } from "./compare-utf8.js";

describe("compareUtf8", () => {
  it("orders the characters where UTF-16 and UTF-8 disagree as UTF-8 does", () => {
    expect(compareUtf8("\uffff", "😀")).toBeLessThan(0);
    expect(compareUtf8("\ue000", "\ud800\udc00")).toBeLessThan(0);
    expect(compareUtf8("😀", "😁")).toBeLessThan(0);
    expect(compareUtf8("a", "a\u0000")).toBeLessThan(0);
    expect(compareUtf8("same", "same")).toBe(0);
  });

  it("has the sign of compareKeys for any well-formed strings", () => {
    const unit = fc.oneof(
      fc.constantFrom("a", "\u0000", "\u007f", "\u0080", "\ud7ff", "\ue000", "\uffff", "😀", "\u{10ffff}"),
      fc.string({ unit: "grapheme", maxLength: 1 }),
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 6 }), fc.string({ unit, maxLength: 6 }), (a, b) => {
        expect(Math.sign(compareUtf8(a, b))).toBe(Math.sign(compareKeys(a, b)));
      }),
      { numRuns: 2000 },
    );
  });
});
