import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { compressAnswer, preferredEncoding } from "./answer-encoding.js";

describe("preferredEncoding", () => {
  it("prefers br, falls back to gzip, honours q=0 and the wildcard", () => {
    expect(preferredEncoding(undefined)).toBeUndefined();
    expect(preferredEncoding("")).toBeUndefined();
    expect(preferredEncoding("gzip, deflate, br")).toBe("br");
    expect(preferredEncoding("gzip, deflate")).toBe("gzip");
    expect(preferredEncoding("br;q=0, gzip;q=0.5")).toBe("gzip");
    expect(preferredEncoding("BR")).toBe("br");
    expect(preferredEncoding("deflate, identity")).toBeUndefined();
    expect(preferredEncoding("*")).toBe("gzip");
    expect(preferredEncoding("gzip;q=0, br;q=0")).toBeUndefined();
  });
});

describe("compressAnswer", () => {
  it("gives bytes the client's decoder turns back into the answer", () => {
    const body = Buffer.from(JSON.stringify({ success: true, features: Object.fromEntries(Array.from({ length: 200 }, (_, index) => [`f${index}`, { isEnabled: index % 2 === 0 }])) }));
    expect(brotliDecompressSync(compressAnswer(body, "br")).equals(body)).toBe(true);
    expect(gunzipSync(compressAnswer(body, "gzip")).equals(body)).toBe(true);
    expect(compressAnswer(body, "br").length).toBeLessThan(body.length / 5);
  });
});
