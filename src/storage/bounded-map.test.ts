import { describe, expect, it } from "vitest";
import { BoundedMap } from "./bounded-map.js";

describe("BoundedMap", () => {
  it("finds what it holds and never holds more than its bound", () => {
    const map = new BoundedMap<string, number>(10);
    for (let index = 0; index < 100; index++) {
      map.set(`k${index}`, index);
      expect(map.size).toBeLessThanOrEqual(10);
      expect(map.get(`k${index}`)).toBe(index);
    }
    // The five most recent are always held; the oldest are gone.
    for (let index = 95; index < 100; index++) expect(map.get(`k${index}`)).toBe(index);
    expect(map.get("k0")).toBeUndefined();
  });

  it("replaces a value in either generation, and deletes from both", () => {
    const map = new BoundedMap<string, number>(4);
    map.set("a", 1);
    map.set("b", 2);
    map.set("c", 3); // "a" and "b" are now the previous generation
    map.set("a", 10);
    expect(map.get("a")).toBe(10);
    map.set("d", 4);
    map.set("e", 5); // the generation holding the old "a" is dropped, the new one stays
    expect(map.get("a")).toBe(10);
    map.delete("a");
    expect(map.get("a")).toBeUndefined();
  });
});
