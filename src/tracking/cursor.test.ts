import { describe, expect, it } from "vitest";
import { ServiceError } from "../errors/catalogue.js";
import { checkListLimit, decodeCursor, DEFAULT_LIST_LIMIT, encodeCursor, MAX_LIST_LIMIT, parseListQuery } from "../storage/cursor.js";

function code(read: () => unknown): string | undefined {
  try {
    read();
  } catch (error) {
    return error instanceof ServiceError ? error.code : "not a ServiceError";
  }
  return undefined;
}

describe("cursors", () => {
  it("round-trip sequence numbers", () => {
    for (const sequence of [0, 1, 42, Number.MAX_SAFE_INTEGER]) expect(decodeCursor(encodeCursor(sequence))).toBe(sequence);
    expect(decodeCursor(undefined)).toBe(0);
  });

  it("refuse anything else", () => {
    for (const bad of ["", "x", "-3", "007", "1e3", "9007199254740993", "12345678901234567"]) expect(code(() => decodeCursor(bad))).toBe("INVALID_QUERY");
  });
});

describe("list queries", () => {
  it("default the limit and lower one over the maximum", () => {
    expect(parseListQuery(undefined, undefined)).toEqual({ after: undefined, limit: DEFAULT_LIST_LIMIT });
    expect(parseListQuery(null, null)).toEqual({ after: undefined, limit: DEFAULT_LIST_LIMIT });
    expect(parseListQuery("5", "1")).toEqual({ after: "5", limit: 1 });
    expect(parseListQuery(undefined, "1000")).toEqual({ after: undefined, limit: 1000 });
    expect(parseListQuery(undefined, "1001")).toEqual({ after: undefined, limit: MAX_LIST_LIMIT });
    expect(checkListLimit(MAX_LIST_LIMIT)).toBe(MAX_LIST_LIMIT);
  });

  it("refuse bad values with INVALID_QUERY", () => {
    for (const limit of ["0", "-1", "abc", "1.5", " 2", "99999999999"]) expect(code(() => parseListQuery(undefined, limit))).toBe("INVALID_QUERY");
    expect(code(() => parseListQuery("nope", "10"))).toBe("INVALID_QUERY");
  });
});
