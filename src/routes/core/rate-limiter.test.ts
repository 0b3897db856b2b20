import { describe, expect, it } from "vitest";
import { RateLimiter } from "./rate-limiter.js";

describe("RateLimiter", () => {
  it("allows the budget per subject per second, then refuses until the next window", () => {
    let now = 10_000;
    const limiter = new RateLimiter(3, () => now);
    expect([1, 2, 3, 4].map(() => limiter.allow("a"))).toEqual([true, true, true, false]);
    expect(limiter.allow("b")).toBe(true);
    expect(limiter.retryAfterSeconds()).toBe(1);
    now += 1000;
    expect(limiter.allow("a")).toBe(true);
  });

  it("is off at zero", () => {
    const limiter = new RateLimiter(0);
    for (let index = 0; index < 10_000; index++) expect(limiter.allow("a")).toBe(true);
  });
});
