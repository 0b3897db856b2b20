import { describe, expect, it } from "vitest";
import { AttributeCache } from "./attribute-cache.js";

describe("AttributeCache", () => {
  it("reuses attributes and absence only under the epoch they were read at, within the TTL", () => {
    let now = 0;
    const cache = new AttributeCache(10, () => now);
    cache.set("env\0user\0u1", 3, 1_000, { plan: "pro" });
    cache.set("env\0user\0u2", 3, 1_000, null);
    expect(cache.get("env\0user\0u1", 3)).toEqual({ plan: "pro" });
    expect(cache.get("env\0user\0u2", 3)).toBeNull();
    expect(cache.get("env\0user\0u1", 4)).toBeUndefined();
    cache.set("env\0user\0u1", 4, 1_000, { plan: "free" });
    now = 1_000;
    expect(cache.get("env\0user\0u1", 4)).toBeUndefined();
  });

  it("keeps nothing with a zero TTL, and evicts the oldest past its bound", () => {
    const cache = new AttributeCache(2);
    cache.set("a", 0, 0, { x: 1 });
    expect(cache.get("a", 0)).toBeUndefined();
    cache.set("a", 0, 1_000, null);
    cache.set("b", 0, 1_000, null);
    cache.set("c", 0, 1_000, null);
    expect(cache.get("a", 0)).toBeUndefined();
    expect(cache.get("c", 0)).toBeNull();
  });

  it("serves 1,000 users that come round in turn from memory, from a cold start", () => {
    const cache = new AttributeCache<{ plan: string }>(10_000, () => 0);
    let lastRoundHits = 0;
    for (let round = 0; round < 10; round++) {
      lastRoundHits = 0;
      for (let user = 0; user < 1_000; user++) {
        const key = `env\0user\0u${user}`;
        if (!cache.consult()) continue;
        if (cache.get(key, 0) !== undefined) lastRoundHits++;
        else cache.set(key, 0, 60_000, { plan: "pro" });
      }
    }
    expect(lastRoundHits).toBe(1_000);
  });
});
