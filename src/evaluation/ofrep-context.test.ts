import { describe, expect, it } from "vitest";
import { contextOfOfrep } from "./ofrep-context.js";

describe("contextOfOfrep", () => {
  it("maps targetingKey, companyId, namespaces and top-level attributes", () => {
    expect(contextOfOfrep({ targetingKey: "u1", companyId: "c1", plan: "pro", user: { email: "a@b" }, company: { seats: 3 }, other: { platform: "web" } })).toEqual({
      user: { email: "a@b", plan: "pro", id: "u1" },
      company: { seats: 3, id: "c1" },
      other: { platform: "web" },
    });
  });

  it("lets the explicit forms win and holds ids as strings", () => {
    expect(contextOfOfrep({ targetingKey: "t", companyId: 9, role: "top", user: { id: 5, role: "inner" }, company: { id: "c" } })).toEqual({
      user: { id: "5", role: "inner" },
      company: { id: "c" },
    });
    expect(contextOfOfrep({ targetingKey: 42 })).toEqual({ user: { id: "42" } });
  });

  it("leaves out namespaces not sent, keeps those sent empty, and ignores an empty targetingKey", () => {
    expect(contextOfOfrep({})).toEqual({});
    expect(contextOfOfrep({ targetingKey: "" })).toEqual({});
    expect(contextOfOfrep({ targetingKey: "", user: {}, other: {} })).toEqual({ user: {}, other: {} });
  });

  it("keeps prototype-named attributes as plain data", () => {
    const mapped = contextOfOfrep({ constructor: "x", toString: "y" } as never);
    expect(mapped).toEqual({ user: { constructor: "x", toString: "y" } });
    expect(Object.getPrototypeOf(mapped.user)).toBe(Object.prototype);
  });
});
